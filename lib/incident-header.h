/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The header of an incident file (layout: incident.h), and reading and
 * checking it: what the store reader needs to open an incident, apart
 * from the incident writers (incident.c), which read chunks through the
 * store reader.
 */
#ifndef FR_INCIDENT_HEADER_H
#define FR_INCIDENT_HEADER_H

#include <stdint.h>

#define FR_INCIDENT_MAGIC "FRECINC\0"
/* metadata larger than this is refused by readers */
#define FR_INCIDENT_META_MAX (16u << 20)

/* Compatible flag: the file is sealed, length and body_crc are set (a
 * reader that ignores them reads the file as before). */
#define FR_INCIDENT_COMPAT_SEALED 0x1u

struct fr_incident_header {
	char magic[8];
	uint32_t header_size;   /* 64 */
	uint16_t version;       /* FR_STORE_VERSION */
	uint16_t reserved0;
	uint32_t compat_flags;  /* FR_INCIDENT_COMPAT_SEALED */
	uint32_t incompat_flags;
	uint32_t meta_len;      /* bytes of JSON after the header */
	uint32_t meta_crc;      /* crc32 of them */
	uint64_t chunks_offset; /* where the first chunk starts */
	uint64_t created_wall;  /* ns since epoch */
	uint64_t length;        /* sealed: bytes of the file (the end of its last chunk); else 0 */
	uint32_t body_crc;      /* sealed: crc32 of bytes [chunks_offset, length); else 0 */
	uint32_t header_crc;    /* crc32 of the bytes before this field */
};
_Static_assert(sizeof(struct fr_incident_header) == 64, "incident header layout");

/* Reads and checks the header and metadata of an incident file: returns
 * 0 with *ret_meta (malloc'd, NUL-terminated) and the chunk area, or
 * -EBADMSG / -EPROTONOSUPPORT / -errno. */
int fr_incident_read_header(int fd, char **ret_meta, uint64_t *ret_chunks_offset);

/* The seal of an incident file whose header fr_incident_read_header
 * accepted: 1 with *ret_length (the bytes of the incident, from the
 * start of the file) when it is sealed, 0 when it is not (an older
 * file: it ends where the file does), or -errno. */
int fr_incident_read_length(int fd, uint64_t *ret_length);

/* Checks that @fd holds a whole sealed incident (header, metadata, and
 * every byte of its chunk area against body_crc): 0 with *ret_meta and
 * *ret_length, -EBADMSG for a torn, unsealed or damaged file, or -errno. */
int fr_incident_check_sealed(int fd, char **ret_meta, uint64_t *ret_length);

#endif
