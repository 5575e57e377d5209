/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>

#include "chunk.h"
#include "incident.h"
#include "kernel-names.h"
#include "macro.h"

static int write_all(int fd, const void *p, size_t n)
{
	const uint8_t *b = p;

	while (n) {
		ssize_t k = write(fd, b, n);
		if (k < 0) {
			if (errno == EINTR)
				continue;
			return negative_errno();
		}
		b += k;
		n -= (size_t)k;
	}
	return 0;
}

static void header_fill(struct fr_incident_header *h, const void *meta, size_t meta_len, uint64_t length,
			uint32_t body_crc)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	*h = (struct fr_incident_header){};
	memcpy(h->magic, FR_INCIDENT_MAGIC, 8);
	h->header_size = htole32(sizeof(*h));
	h->version = htole16(FR_STORE_VERSION);
	h->compat_flags = htole32(FR_INCIDENT_COMPAT_SEALED);
	h->meta_len = htole32((uint32_t)meta_len);
	h->meta_crc = htole32(fr_crc32(meta, meta_len));
	h->chunks_offset = htole64(sizeof(*h) + ALIGN8(meta_len));
	h->created_wall = htole64((uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec);
	h->length = htole64(length);
	h->body_crc = htole32(body_crc);
	h->header_crc = htole32(fr_crc32(h, offsetof(struct fr_incident_header, header_crc)));
}

/* The crc32 of the body continued over one chunk as stored (header,
 * payload, padding) without a second pass over its payload: the store
 * reader has just checked the payload against payload_crc, and zlib
 * combines the two. */
static uint32_t crc_chunk(uint32_t crc, const uint8_t *buf, size_t len)
{
	struct fr_chunk_info ci;
	size_t hl = sizeof(struct fr_chunk_header);

	if (fr_chunk_header_parse((const struct fr_chunk_header *)buf, &ci) < 0 || hl + ci.payload_size > len)
		return (uint32_t)crc32(crc, buf, (uInt)len);
	crc = (uint32_t)crc32(crc, buf, (uInt)hl);
	crc = (uint32_t)crc32_combine(crc, ci.payload_crc, (z_off_t)ci.payload_size);
	return (uint32_t)crc32(crc, buf + hl + ci.payload_size, (uInt)(len - hl - ci.payload_size));
}

uint64_t fr_incident_size_max(const char *meta, const struct fr_chunk_ref *refs, size_t nrefs)
{
	uint64_t n = sizeof(struct fr_incident_header) + ALIGN8(strlen(meta));

	for (size_t i = 0; i < nrefs; i++)
		n += fr_chunk_disk_size(&refs[i].info);
	return n;
}

struct fr_incident_builder {
	uint8_t *buf;
	size_t len, cap;  /* len: the end of the chunks so far */
	size_t meta_room; /* bytes between the header and the first chunk */
	uint32_t crc;     /* of the chunk area so far */
	struct fr_kernel_names_collector *names; /* what the chunks leave unnamed */
};

int fr_incident_builder_new(size_t meta_room, struct fr_incident_builder **ret)
{
	struct fr_incident_builder *b;

	meta_room = ALIGN8(meta_room);
	if (meta_room > FR_INCIDENT_META_MAX)
		return -E2BIG;
	b = calloc(1, sizeof(*b));
	if (!b)
		return -ENOMEM;
	b->meta_room = meta_room;
	b->len = b->cap = sizeof(struct fr_incident_header) + meta_room;
	b->buf = calloc(1, b->cap);
	if (!b->buf || fr_kernel_names_collector_new(&b->names) < 0) {
		fr_incident_builder_free(b);
		return -ENOMEM;
	}
	*ret = b;
	return 0;
}

struct fr_incident_builder *fr_incident_builder_free(struct fr_incident_builder *b)
{
	if (b) {
		fr_kernel_names_collector_free(b->names);
		free(b->buf);
		free(b);
	}
	return NULL;
}

/* Appends bytes to the chunk area. */
static int builder_append(struct fr_incident_builder *b, const void *chunk, size_t len)
{
	if (b->len + len > b->cap) {
		size_t cap = MAX(b->cap * 2, b->len + len);
		uint8_t *n = realloc(b->buf, cap);
		if (!n)
			return -ENOMEM;
		b->buf = n;
		b->cap = cap;
	}
	memcpy(b->buf + b->len, chunk, len);
	b->crc = crc_chunk(b->crc, chunk, len);
	b->len += len;
	return 0;
}

int fr_incident_builder_add(struct fr_incident_builder *b, const void *chunk, size_t len)
{
	int k = fr_kernel_names_collector_add(b->names, chunk, len);

	return k < 0 ? k : builder_append(b, chunk, len);
}

/* Hands each chunk of @refs to @put as stored (header, payload, padding);
 * a chunk damaged or overwritten since it was selected is left out. */
static int copy_chunks(struct fr_store_reader *r, const struct fr_chunk_ref *refs, size_t nrefs,
		       int (*put)(void *userdata, const uint8_t *buf, size_t len), void *userdata)
{
	int k = 0;

	for (size_t i = 0; i < nrefs && k == 0; i++) {
		uint8_t *buf = NULL;
		size_t len = 0;
		k = fr_store_reader_read_chunk(r, &refs[i], &buf, &len);
		if (k == -EBADMSG) {
			k = 0;
			continue;
		}
		if (k == 0)
			k = put(userdata, buf, len);
		free(buf);
	}
	return k;
}

static int builder_put(void *userdata, const uint8_t *buf, size_t len)
{
	return fr_incident_builder_add(userdata, buf, len);
}

int fr_incident_builder_add_refs(struct fr_incident_builder *b, struct fr_store_reader *r,
				 const struct fr_chunk_ref *refs, size_t nrefs)
{
	int k = fr_kernel_names_collector_set_store(b->names, fr_store_reader_dir_fd(r));

	if (k == 0)
		k = copy_chunks(r, refs, nrefs, builder_put, b);
	/* named now: the seal has only the chunks added after to look up */
	if (k == 0)
		k = fr_kernel_names_collector_resolve(b->names);
	return k;
}

/* The names chunks for the kernel frames the chunks leave unnamed, last. */
static int add_names(struct fr_kernel_names_collector *c, int (*put)(void *userdata, const uint8_t *buf, size_t len),
		     void *userdata)
{
	_cleanup_free_ uint8_t *names = NULL;
	size_t len = 0;
	int k = fr_kernel_names_collector_finish(c, &names, &len);

	return k < 0 || len == 0 ? k : put(userdata, names, len);
}

static int builder_put_names(void *userdata, const uint8_t *buf, size_t len)
{
	return builder_append(userdata, buf, len);
}

int fr_incident_builder_prepare_names(struct fr_incident_builder *b)
{
	return fr_kernel_names_collector_prepare(b->names);
}

int fr_incident_builder_seal(struct fr_incident_builder *b, const char *meta)
{
	size_t meta_len = strlen(meta);
	int k;

	if (meta_len > b->meta_room)
		return -E2BIG;
	k = add_names(b->names, builder_put_names, b);
	if (k < 0)
		return k;
	memcpy(b->buf + sizeof(struct fr_incident_header), meta, meta_len);
	/* JSON allows the spaces after the object */
	memset(b->buf + sizeof(struct fr_incident_header) + meta_len, ' ', b->meta_room - meta_len);
	header_fill((struct fr_incident_header *)b->buf, b->buf + sizeof(struct fr_incident_header), b->meta_room,
		    b->len, b->crc);
	return 0;
}

void fr_incident_builder_lend_ksyms(struct fr_incident_builder *b, const uint8_t boot_id[16],
				    const struct fr_ksyms *ks)
{
	fr_kernel_names_collector_lend_ksyms(b->names, boot_id, ks);
}

void fr_incident_builder_names_stats(const struct fr_incident_builder *b, struct fr_kernel_names_stats *ret)
{
	fr_kernel_names_collector_stats(b->names, ret);
}

const uint8_t *fr_incident_builder_data(const struct fr_incident_builder *b, size_t *ret_len)
{
	*ret_len = b->len;
	return b->buf;
}

size_t fr_incident_builder_chunks_offset(const struct fr_incident_builder *b)
{
	return sizeof(struct fr_incident_header) + b->meta_room;
}

struct file_out {
	int fd;
	uint32_t crc;
	int64_t total;
	fr_incident_chunk_filter filter;
	void *filter_userdata;
	struct fr_kernel_names_collector *names;
};

/* Appends to the file: a chunk or more, or the names chunks. */
static int file_append(void *userdata, const uint8_t *buf, size_t len)
{
	struct file_out *o = userdata;
	int k = write_all(o->fd, buf, len);

	if (k == 0) {
		o->crc = crc_chunk(o->crc, buf, len);
		o->total += (int64_t)len;
	}
	return k;
}

/* Chunks into the file: their kernel frames are named from what the file
 * holds, after the filter. */
static int file_write(struct file_out *o, const uint8_t *buf, size_t len)
{
	int k = fr_kernel_names_collector_add(o->names, buf, len);

	return k < 0 ? k : file_append(o, buf, len);
}

static int file_put(void *userdata, const uint8_t *buf, size_t len)
{
	struct file_out *o = userdata;
	_cleanup_free_ uint8_t *made = NULL;
	size_t made_len = 0;
	int k;

	if (!o->filter)
		return file_write(o, buf, len);
	k = o->filter(o->filter_userdata, buf, len, &made, &made_len);
	if (k < 0)
		return k;
	if (made && made_len == 0)
		return 0;
	return made ? file_write(o, made, made_len) : file_write(o, buf, len);
}

int64_t fr_incident_write_fd(int fd, const char *meta, struct fr_store_reader *r, const struct fr_chunk_ref *refs,
			     size_t nrefs, fr_incident_chunk_filter filter, void *userdata,
			     struct fr_kernel_names_stats *names_st)
{
	struct fr_incident_header h = {};
	static const uint8_t zero[8];
	size_t meta_len = strlen(meta);
	struct file_out out = { .fd = fd, .filter = filter, .filter_userdata = userdata };
	int k;

	if (names_st)
		*names_st = (struct fr_kernel_names_stats){};
	if (meta_len > FR_INCIDENT_META_MAX)
		return -E2BIG;
	k = fr_kernel_names_collector_new(&out.names);
	if (k == 0)
		k = fr_kernel_names_collector_set_store(out.names, fr_store_reader_dir_fd(r));
	/* the header last: it holds the length and crc of what follows */
	if (k == 0)
		k = write_all(fd, &h, sizeof(h));
	if (k == 0)
		k = write_all(fd, meta, meta_len);
	if (k == 0)
		k = write_all(fd, zero, ALIGN8(meta_len) - meta_len);
	out.total = (int64_t)(sizeof(h) + ALIGN8(meta_len));
	if (k == 0)
		k = copy_chunks(r, refs, nrefs, file_put, &out);
	if (k == 0)
		k = add_names(out.names, file_append, &out);
	if (names_st && out.names)
		fr_kernel_names_collector_stats(out.names, names_st);
	fr_kernel_names_collector_free(out.names);
	if (k == 0) {
		header_fill(&h, meta, meta_len, (uint64_t)out.total, out.crc);
		ssize_t n = pwrite(fd, &h, sizeof(h), 0);
		if (n != (ssize_t)sizeof(h))
			k = n < 0 ? negative_errno() : -EIO;
	}
	return k < 0 ? k : out.total;
}

int64_t fr_incident_write(const char *path, const char *meta, struct fr_store_reader *r,
			  const struct fr_chunk_ref *refs, size_t nrefs, struct fr_kernel_names_stats *names_st)
{
	_cleanup_free_ char *tmp = NULL, *dir = NULL;
	_cleanup_close_ int fd = -EBADF, dfd = -EBADF;
	int64_t total;
	int k = 0;

	if (strlen(meta) > FR_INCIDENT_META_MAX)
		return -E2BIG;
	if (asprintf(&tmp, "%s.tmp", path) < 0 || !(dir = strdup(path)))
		return -ENOMEM;
	/* a new file of ours, never one (or a link) left there: a stale
	 * temporary file of a crash goes first */
	(void)unlink(tmp);
	fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0640);
	if (fd < 0)
		return negative_errno();
	(void)fchmod(fd, 0640);

	total = fr_incident_write_fd(fd, meta, r, refs, nrefs, NULL, NULL, names_st);
	if (total < 0)
		k = (int)total;
	if (k == 0 && fsync(fd) < 0)
		k = negative_errno();
	if (k == 0 && rename(tmp, path) < 0)
		k = negative_errno();
	if (k < 0) {
		unlink(tmp);
		return k;
	}
	/* the rename is durable once the directory is */
	dfd = open(dirname(dir), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd >= 0)
		(void)fsync(dfd);
	return total;
}

int fr_incident_pwrite(int fd, const void *buf, size_t len, uint64_t off)
{
	const uint8_t *b = buf;
	size_t done = 0;

	while (done < len) {
		ssize_t k = pwrite(fd, b + done, len - done, (off_t)(off + done));
		if (k < 0) {
			if (errno == EINTR)
				continue;
			return negative_errno();
		}
		if (k == 0)
			return -EIO;
		done += (size_t)k;
	}
	return 0;
}

int fr_incident_write_at(int fd, const void *buf, size_t len)
{
	int k = fr_incident_pwrite(fd, buf, len, 0);

	if (k == 0 && fdatasync(fd) < 0)
		k = negative_errno();
	return k;
}
