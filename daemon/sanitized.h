/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * FR_SANITIZED: built with AddressSanitizer (scripts/check's second
 * pass), where the parser helper cannot have its memory limits (ASan
 * reserves terabytes of shadow) and a finding in it must stop the test
 * run, not just restart the helper (parser.c).
 */
#ifndef FR_SANITIZED_H
#define FR_SANITIZED_H

#if defined(__SANITIZE_ADDRESS__)
#define FR_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define FR_SANITIZED 1
#endif
#endif

#endif
