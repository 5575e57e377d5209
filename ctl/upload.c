/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * frctl upload: each incident file not yet uploaded is PUT to upload.url
 * with its file name appended, from outside the recorder's sandbox (the
 * recorder has no network): flightrec-upload.path starts it when
 * incidents/ changes, flightrec-upload.service runs it again while it
 * fails, flightrec-upload.timer sweeps up what no event started it for.
 *
 * Only whole incidents are sent: the daemon writes a new one as
 * ID.fri.tmp or into .spare and gives it its ID.fri name by rename() once
 * it is durable, so a name ending in .fri is complete and never changes
 * again.  Incidents are only read, never changed or removed.
 *
 * What went (file name, size, sha256, when) is kept in a state file of
 * the uploader's own, replaced whole by rename() after each upload: an
 * incident goes once however often the unit runs, and a run cut short
 * loses nothing that already went.  Each run tries at most upload.queue
 * incidents, newest first; the older ones wait for the next run.  The
 * server not answering ends the run (every other try would wait as long);
 * an HTTP error moves on to the next incident.
 *
 * The URL's user name, password and query string (an object store's
 * signature) are secrets: they never reach a log line or the journal.
 * Credentials are better in upload.netrc than in the URL: the daemon
 * copies its configuration file into every incident.
 *
 * Long because the verb is a whole program of its own, and nothing here
 * is used by another verb: the URL and its secrets, the state file, the
 * libcurl transfer and the journal entries are each only the uploader's.
 */
#include <curl/curl.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <glib.h>
#include <inttypes.h>
#include <json-c/json.h>
#include <limits.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <systemd/sd-journal.h>
#include <time.h>
#include <unistd.h>

#include "../lib/clock.h"
#include "../lib/dlopen-lib.h"
#include "../lib/incident.h"
/* GLib's MIN and MAX give way to lib/macro.h's (the same definitions) */
#undef MIN
#undef MAX
#include "../lib/macro.h"
#include "../lib/parse.h"
#include "frctl-error.h"
#include "frctl.h"
#include "options.h"
#include "output-file.h"
#include "paths.h"

/* libcurl, opened by the verb (lib/dlopen-lib.h): not loaded, with the 30
 * libraries it needs, at every start of frctl */
#define CURL_FUNCTIONS(X) \
	X(curl_easy_cleanup) X(curl_easy_escape) X(curl_easy_getinfo) \
	X(curl_easy_init) X(curl_easy_perform) X(curl_easy_setopt) \
	X(curl_easy_strerror) X(curl_free) X(curl_global_cleanup) \
	X(curl_global_init) X(curl_slist_append) X(curl_slist_free_all) \
	X(curl_url) X(curl_url_cleanup) X(curl_url_dup) \
	X(curl_url_get) X(curl_url_set) X(curl_url_strerror)
#define DECLARE(f) static typeof(f) *dl_##f;
CURL_FUNCTIONS(DECLARE)

static int load_curl(void)
{
#define SYM(f) FR_DLSYM(dl_##f, f),
	static const struct fr_dlsym syms[] = { CURL_FUNCTIONS(SYM) };
	const char *why;

	if (fr_dlopen_lib("libcurl.so.4", syms, sizeof(syms) / sizeof(*syms), &why) < 0) {
		frctl_error("upload: cannot load libcurl (Debian package libcurl4): %s", why);
		return -ELIBACC;
	}
	return 0;
}

/* MESSAGE_IDs of the journal entries (flightrecd(8), "The upload's journal entries") */
#define FR_UPLOAD_MESSAGE_ID "cb03bb4fd9604aff80444726cb8a0397"
#define FR_UPLOAD_FAILED_MESSAGE_ID "4865af81d24149248a3dd0be067bf352"

/* The state file when neither --state nor systemd's StateDirectory= name
 * one (the unit's StateDirectory=flightrec-upload is this directory). */
#define FR_UPLOAD_STATE_DIR "/var/lib/flightrec-upload"
#define FR_UPLOAD_STATE_NAME "uploaded.json"

static const char usage[] =
	"Usage: frctl upload [--state FILE]\n\n"
	"PUTs each incident file of the store not uploaded yet to upload.url from\n"
	"the configuration, with the file name appended (a URL whose path ends in\n"
	"'/', such as a WebDAV collection), over HTTP or HTTPS with the server's\n"
	"certificate checked.  At most upload.queue incidents are tried per run,\n"
	"newest first; older ones wait for the next run.  What was uploaded (name,\n"
	"size, sha256) is remembered in the state file, so each incident goes\n"
	"once.  Incidents are never changed or removed.  Each upload and each\n"
	"failure is logged to the journal.  flightrec-upload.path runs this for\n"
	"every new incident; see frctl(1), UPLOAD.\n\n"
	"  --state FILE   what was uploaded (default: $STATE_DIRECTORY/" FR_UPLOAD_STATE_NAME ",\n"
	"                 else " FR_UPLOAD_STATE_DIR "/" FR_UPLOAD_STATE_NAME ")\n\n"
	"Exit status: 0 nothing left to upload (or upload.url is empty: uploads\n"
	"are off), 1 an upload failed (run it again later), 2 bad usage or\n"
	"configuration (such as an upload.url that is no http(s) URL, or an\n"
	"upload.netrc that cannot be read).\n";

/* An incident file not uploaded yet. */
struct pending {
	char *name; /* ID.fri */
	uint64_t size;
};

struct uploader {
	struct frctl *f;
	const char *dir;        /* STORE/incidents */
	CURL *curl;
	struct curl_slist *headers;
	CURLU *base;            /* upload.url, parsed */
	uint64_t timeout_ms;
	bool to_journal;        /* stderr is the journal: no lines of our own */
	struct json_object *done; /* the state: name -> {bytes, sha256, time} */
	const char *state_path;
	char err[CURL_ERROR_SIZE];
};

/* Where the incident's bytes come from for libcurl: the open file, at an
 * offset (libcurl rewinds it when it must send the body again). */
struct source {
	int fd;
	uint64_t off;
};

static void pending_free_all(struct pending *v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(v[i].name);
	free(v);
}

/* @h without its user name, password, login options, query string and
 * fragment: what logs may show.  Caller frees. */
static char *url_shown(CURLU *h)
{
	CURLU *c = dl_curl_url_dup(h);
	char *url = NULL, *s = NULL;

	if (c && dl_curl_url_set(c, CURLUPART_USER, NULL, 0) == CURLUE_OK &&
	    dl_curl_url_set(c, CURLUPART_PASSWORD, NULL, 0) == CURLUE_OK &&
	    dl_curl_url_set(c, CURLUPART_OPTIONS, NULL, 0) == CURLUE_OK &&
	    dl_curl_url_set(c, CURLUPART_QUERY, NULL, 0) == CURLUE_OK &&
	    dl_curl_url_set(c, CURLUPART_FRAGMENT, NULL, 0) == CURLUE_OK &&
	    dl_curl_url_get(c, CURLUPART_URL, &url, 0) == CURLUE_OK)
		s = strdup(url);
	dl_curl_free(url);
	dl_curl_url_cleanup(c);
	return s;
}

static bool journal_is_stderr(void)
{
	const char *e = getenv("JOURNAL_STREAM");
	unsigned long long dev, ino;
	struct stat st;

	/* systemd.exec(5): "device:inode" of the stream stdout and stderr
	 * were connected to, when they were */
	return e && sscanf(e, "%llu:%llu", &dev, &ino) == 2 && fstat(STDERR_FILENO, &st) == 0 &&
	       st.st_dev == dev && st.st_ino == ino;
}

/* upload.url with "%H" replaced by this host's name (escaped), so that one
 * configuration gives every host of a fleet its own prefix: incident
 * names (TIME-RULE.fri) are unique on one host only.  Caller frees. */
static char *expand_url(const char *url)
{
	char host[HOST_NAME_MAX + 1] = "";
	char *esc, *out = NULL;
	size_t len = 0;
	FILE *f;

	if (!strstr(url, "%H"))
		return strdup(url);
	if (gethostname(host, sizeof(host) - 1) < 0 || !*host)
		snprintf(host, sizeof(host), "localhost");
	esc = dl_curl_easy_escape(NULL, host, 0);
	f = esc ? open_memstream(&out, &len) : NULL;
	if (!f) {
		dl_curl_free(esc);
		return NULL;
	}
	for (const char *p = url; *p; p++) {
		if (p[0] == '%' && p[1] == 'H') {
			fputs(esc, f);
			p++;
		} else
			fputc(*p, f);
	}
	dl_curl_free(esc);
	if (fclose(f) != 0) {
		free(out);
		return NULL;
	}
	return out;
}

/* Parses upload.url: an http or https URL whose path ends in '/'.  On
 * error prints one line and returns -EINVAL; one that libcurl cannot
 * parse is not shown, since what part of it is a secret is unknown. */
static int parse_base(struct uploader *u, const char *url_conf)
{
	_cleanup_free_ char *shown = NULL, *url = expand_url(url_conf);
	char *scheme = NULL, *path = NULL;
	CURLUcode uc;
	int k = 0;

	if (!url)
		return -ENOMEM;
	u->base = dl_curl_url();
	if (!u->base)
		return -ENOMEM;
	uc = dl_curl_url_set(u->base, CURLUPART_URL, url, 0);
	if (uc != CURLUE_OK) {
		frctl_error("upload: upload.url in %s is not a URL: %s (e.g. https://dav.example.com/incidents/)",
			    u->f->config_path, dl_curl_url_strerror(uc));
		return -EINVAL;
	}
	shown = url_shown(u->base);
	if (dl_curl_url_get(u->base, CURLUPART_SCHEME, &scheme, 0) != CURLUE_OK ||
	    dl_curl_url_get(u->base, CURLUPART_PATH, &path, 0) != CURLUE_OK)
		k = -ENOMEM;
	else if (strcmp(scheme, "http") != 0 && strcmp(scheme, "https") != 0) {
		frctl_error("upload: upload.url \"%s\" in %s: only http:// and https:// URLs are uploaded to (e.g. https://dav.example.com/incidents/)",
			    shown ? shown : "", u->f->config_path);
		k = -EINVAL;
	} else if (!*path || path[strlen(path) - 1] != '/') {
		frctl_error("upload: upload.url \"%s\" in %s must end in '/': each incident goes to the URL with its file name appended (e.g. https://dav.example.com/incidents/)",
			    shown ? shown : "", u->f->config_path);
		k = -EINVAL;
	}
	dl_curl_free(scheme);
	dl_curl_free(path);
	return k;
}

/* The URL an incident file goes to: the path of upload.url with the file
 * name appended, its query string kept.  Caller frees with curl_url_cleanup. */
static CURLU *object_url(struct uploader *u, const char *name)
{
	CURLU *h = dl_curl_url_dup(u->base);
	char *path = NULL, *esc = dl_curl_easy_escape(NULL, name, 0), *full = NULL;

	if (h && esc && dl_curl_url_get(h, CURLUPART_PATH, &path, 0) == CURLUE_OK &&
	    asprintf(&full, "%s%s", path, esc) >= 0 && dl_curl_url_set(h, CURLUPART_PATH, full, 0) == CURLUE_OK) {
		free(full);
		dl_curl_free(path);
		dl_curl_free(esc);
		return h;
	}
	free(full);
	dl_curl_free(path);
	dl_curl_free(esc);
	dl_curl_url_cleanup(h);
	return NULL;
}

static size_t read_body(char *buf, size_t size, size_t nitems, void *userdata)
{
	struct source *s = userdata;
	ssize_t n;

	do
		n = pread(s->fd, buf, size * nitems, (off_t)s->off);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return CURL_READFUNC_ABORT;
	s->off += (uint64_t)n;
	return (size_t)n;
}

static int seek_body(void *userdata, curl_off_t offset, int origin)
{
	struct source *s = userdata;

	if (origin != SEEK_SET || offset < 0)
		return CURL_SEEKFUNC_CANTSEEK;
	s->off = (uint64_t)offset;
	return CURL_SEEKFUNC_OK;
}

/* The sha256 (hex) and size of what @fd holds from its start. */
static int hash_file(int fd, char hex[static 65], uint64_t *ret_size)
{
	GChecksum *c = g_checksum_new(G_CHECKSUM_SHA256);
	uint8_t buf[64 * 1024];
	uint64_t size = 0;
	int k = 0;

	for (;;) {
		ssize_t n = pread(fd, buf, sizeof(buf), (off_t)size);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			k = negative_errno();
			break;
		}
		if (n == 0)
			break;
		g_checksum_update(c, buf, (gssize)n);
		size += (uint64_t)n;
	}
	if (k == 0) {
		snprintf(hex, 65, "%s", g_checksum_get_string(c));
		*ret_size = size;
	}
	g_checksum_free(c);
	return k;
}

/* The state file: { "uploaded": { NAME: { bytes, sha256, time, url } } }.
 * None yet is an empty state; one that does not parse is set aside with a
 * warning (what it listed is uploaded again: a PUT of the same name
 * replaces the same bytes). */
static int state_load(struct uploader *u)
{
	struct json_object *root, *up;
	struct stat st;

	if (stat(u->state_path, &st) < 0) {
		if (errno != ENOENT) {
			frctl_error("upload: cannot read the state file %s: %s", u->state_path, strerror(errno));
			return negative_errno();
		}
		u->done = json_object_new_object();
		return 0;
	}
	root = json_object_from_file(u->state_path);
	if (root && json_object_object_get_ex(root, "uploaded", &up) && json_object_is_type(up, json_type_object))
		u->done = json_object_get(up);
	else {
		fprintf(stderr, "frctl: upload: warning: the state file %s is damaged; every incident is uploaded again.\n",
			u->state_path);
		u->done = json_object_new_object();
	}
	json_object_put(root);
	return 0;
}

/* Whether @name of @size went already (a name that comes back with other
 * bytes is another incident: the daemon reuses the name of a removed one). */
static bool state_has(struct uploader *u, const char *name, uint64_t size)
{
	struct json_object *e, *b;

	return json_object_object_get_ex(u->done, name, &e) && json_object_object_get_ex(e, "bytes", &b) &&
	       json_object_get_uint64(b) == size;
}

/* Writes the state: a temporary file, fsync, rename over the old one,
 * fsync of the directory.  Entries of incidents no longer in the store
 * are left out (@present), so it is as bounded as the incidents are. */
static int state_save(struct uploader *u, char **present, size_t npresent)
{
	struct json_object *root = json_object_new_object(), *keep = json_object_new_object();
	_cleanup_free_ char *tmp = NULL, *dir = strdup(u->state_path);
	_cleanup_close_ int dfd = -EBADF;
	FILE *f = NULL;
	int k;

	for (size_t i = 0; i < npresent; i++) {
		struct json_object *e;
		if (json_object_object_get_ex(u->done, present[i], &e))
			json_object_object_add(keep, present[i], json_object_get(e));
	}
	json_object_object_add(root, "uploaded", keep);
	k = dir ? frctl_output_open(u->state_path, &tmp, &f) : -ENOMEM;
	if (k == 0) {
		fprintf(f, "%s\n", json_object_to_json_string_ext(root, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_NOSLASHESCAPE));
		k = frctl_output_commit(f, tmp, u->state_path);
		fclose(f);
		if (k < 0)
			unlink(tmp);
	}
	json_object_put(root);
	if (k < 0)
		return k;
	/* the rename is durable once the directory is */
	char *slash = strrchr(dir, '/');
	if (slash)
		*slash = 0;
	dfd = open(!slash ? "." : *dir ? dir : "/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd >= 0)
		(void)fsync(dfd);
	return 0;
}

/* The incident files of the store (complete: named *.fri, regular, not
 * hidden), newest first: ids begin with their UTC time.  0 with none or
 * no incidents directory; -errno after printing one line. */
static int cmp_newest_first(const void *a, const void *b)
{
	return strcmp(((const struct pending *)b)->name, ((const struct pending *)a)->name);
}

static int list_incidents(const char *dir, struct pending **ret, size_t *ret_n)
{
	struct pending *v = NULL;
	size_t n = 0, cap = 0;
	struct dirent *de;
	DIR *d = opendir(dir);

	*ret = NULL;
	*ret_n = 0;
	if (!d) {
		if (errno == ENOENT)
			return 0;
		frctl_error("upload: cannot read %s: %s", dir, strerror(errno));
		return negative_errno();
	}
	while ((de = readdir(d))) {
		size_t l = strlen(de->d_name);
		struct stat st;

		if (de->d_name[0] == '.' || l <= strlen(FR_INCIDENT_SUFFIX) ||
		    strcmp(de->d_name + l - strlen(FR_INCIDENT_SUFFIX), FR_INCIDENT_SUFFIX) != 0)
			continue;
		if (fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISREG(st.st_mode))
			continue;
		if (n == cap) {
			struct pending *nv = realloc(v, (cap = cap ? 2 * cap : 32) * sizeof(*nv));
			if (!nv)
				break;
			v = nv;
		}
		v[n].name = strdup(de->d_name);
		v[n].size = (uint64_t)st.st_size;
		if (v[n].name)
			n++;
	}
	closedir(d);
	if (n > 1)
		qsort(v, n, sizeof(*v), cmp_newest_first);
	*ret = v;
	*ret_n = n;
	return 0;
}


/* A journal entry's fields, "NAME=value" each: those without a value are
 * left out rather than sent empty. */
struct fields {
	struct iovec iov[16];
	size_t n;
};

static void field(struct fields *j, const char *name, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void field(struct fields *j, const char *name, const char *fmt, ...)
{
	_cleanup_free_ char *v = NULL;
	va_list ap;
	char *s;
	int k;

	va_start(ap, fmt);
	k = vasprintf(&v, fmt, ap);
	va_end(ap);
	if (k <= 0 || j->n == ELEMENTSOF(j->iov) || asprintf(&s, "%s=%s", name, v) < 0)
		return;
	j->iov[j->n++] = (struct iovec){ .iov_base = s, .iov_len = strlen(s) };
}

static void fields_send(struct fields *j)
{
	/* no journal (frctl run by hand where none runs): the line printed
	 * is the record */
	(void)sd_journal_sendv(j->iov, (int)j->n);
	for (size_t i = 0; i < j->n; i++)
		free(j->iov[i].iov_base);
	j->n = 0;
}

enum result {
	UPLOADED,
	REFUSED,     /* an HTTP error, or the file unreadable: the next may go */
	GONE,        /* removed by the daemon's budget since the listing */
	UNREACHABLE, /* no answer from the server: the run ends */
};

/* One incident: hashed, PUT, logged, and on success entered in the state. */
static enum result upload_one(struct uploader *u, const char *name)
{
	_cleanup_free_ char *path = NULL, *shown = NULL;
	_cleanup_free_ char *id = strndup(name, strlen(name) - strlen(FR_INCIDENT_SUFFIX));
	_cleanup_close_ int fd = -EBADF;
	struct source src = { .fd = -EBADF };
	struct fields j = {};
	enum result res = UPLOADED;
	char sha[65] = "", tbuf[64];
	const char *error = NULL;
	uint64_t size = 0, t0, usec = 0;
	long status = 0;
	CURLU *h = NULL;
	CURLcode cc;
	int k = 0;

	if (!id || asprintf(&path, "%s/%s", u->dir, name) < 0)
		return REFUSED;
	fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	k = fd < 0 ? negative_errno() : hash_file(fd, sha, &size);
	if (k == -ENOENT)
		return GONE;
	h = k < 0 ? NULL : object_url(u, name);
	if (h)
		shown = url_shown(h);
	if (k < 0 || !shown) {
		res = REFUSED;
		error = strerror(k < 0 ? -k : ENOMEM);
	} else {
		src.fd = fd;
		u->err[0] = 0;
		dl_curl_easy_setopt(u->curl, CURLOPT_CURLU, h);
		dl_curl_easy_setopt(u->curl, CURLOPT_READDATA, &src);
		dl_curl_easy_setopt(u->curl, CURLOPT_SEEKDATA, &src);
		dl_curl_easy_setopt(u->curl, CURLOPT_INFILESIZE_LARGE, (curl_off_t)size);
		t0 = fr_now_ns(CLOCK_MONOTONIC);
		cc = dl_curl_easy_perform(u->curl);
		usec = (fr_now_ns(CLOCK_MONOTONIC) - t0) / 1000;
		/* h is freed below */
		dl_curl_easy_setopt(u->curl, CURLOPT_CURLU, NULL);
		(void)dl_curl_easy_getinfo(u->curl, CURLINFO_RESPONSE_CODE, &status);
		if (cc != CURLE_OK) {
			/* no answer, or a transfer cut short */
			res = UNREACHABLE;
			error = u->err[0] ? u->err : dl_curl_easy_strerror(cc);
		} else if (status < 200 || status > 299) {
			res = REFUSED;
			error = "the server refused it";
		}
	}

	field(&j, "INCIDENT", "%s", id);
	field(&j, "INCIDENT_PATH", "%s", path);
	if (*sha) {
		field(&j, "BYTES", "%" PRIu64, size);
		field(&j, "SHA256", "%s", sha);
	}
	if (shown)
		field(&j, "UPLOAD_URL", "%s", shown);
	if (status)
		field(&j, "HTTP_STATUS", "%ld", status);
	if (res == UPLOADED) {
		struct json_object *e = json_object_new_object();

		field(&j, "MESSAGE", "flightrec incident %s uploaded to %s (%" PRIu64 " bytes, HTTP %ld)", id, shown,
		      size, status);
		field(&j, "MESSAGE_ID", FR_UPLOAD_MESSAGE_ID);
		field(&j, "PRIORITY", "6");
		field(&j, "DURATION_USEC", "%" PRIu64, usec);
		fields_send(&j);
		if (!u->to_journal)
			printf("uploaded %s (%" PRIu64 " bytes, sha256 %s) to %s: HTTP %ld\n", id, size, sha, shown, status);
		json_object_object_add(e, "bytes", json_object_new_uint64(size));
		json_object_object_add(e, "sha256", json_object_new_string(sha));
		json_object_object_add(e, "time", json_object_new_string(fr_format_rfc3339(fr_now_ns(CLOCK_REALTIME), tbuf, sizeof(tbuf))));
		json_object_object_add(e, "url", json_object_new_string(shown));
		json_object_object_add(u->done, name, e);
	} else {
		char st[32] = "";

		if (status)
			snprintf(st, sizeof(st), " (HTTP %ld)", status);
		field(&j, "MESSAGE", "flightrec incident %s not uploaded to %s: %s%s; tried again at the next run", id,
		      shown ? shown : "upload.url", error, st);
		field(&j, "MESSAGE_ID", FR_UPLOAD_FAILED_MESSAGE_ID);
		field(&j, "PRIORITY", "3");
		field(&j, "ERROR", "%s", error);
		fields_send(&j);
		if (!u->to_journal)
			fprintf(stderr, "frctl: upload: %s not uploaded to %s: %s%s\n", id, shown ? shown : "upload.url",
				error, st);
	}
	dl_curl_url_cleanup(h);
	return res;
}

/* One run: its counts, and the incidents of its last listing. */
struct run {
	struct pending *v;
	char **present; /* their names, for the state file */
	size_t n;
	struct json_object *tried; /* names tried in this run (set) */
	size_t tried_n, sent, failed, already, waiting;
	bool unreachable;
};

static void run_done(struct run *r)
{
	pending_free_all(r->v, r->n);
	free(r->present);
	json_object_put(r->tried);
	*r = (struct run){};
}

/* Whether the daemon is writing an incident now: ID.fri.tmp, recent (one
 * left by a crash is not waited for). */
static bool incident_in_progress(const char *dir)
{
	uint64_t now = fr_now_ns(CLOCK_REALTIME);
	struct dirent *de;
	bool found = false;
	DIR *d = opendir(dir);

	while (d && !found && (de = readdir(d))) {
		size_t l = strlen(de->d_name), sl = strlen(FR_INCIDENT_SUFFIX ".tmp");
		struct stat st;

		found = l > sl && strcmp(de->d_name + l - sl, FR_INCIDENT_SUFFIX ".tmp") == 0 &&
			fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
			(uint64_t)st.st_mtim.tv_sec * NSEC_PER_SEC + (uint64_t)st.st_mtim.tv_nsec + 10 * NSEC_PER_SEC > now;
	}
	if (d)
		closedir(d);
	return found;
}

/* Lists the incidents and uploads those not uploaded yet nor tried in
 * this run, newest first, while the run's queue lasts.  0, or -errno
 * after printing one line. */
static int upload_pass(struct uploader *u, struct run *r)
{
	int k;

	pending_free_all(r->v, r->n);
	free(r->present);
	r->v = NULL;
	r->present = NULL;
	r->n = r->already = r->waiting = 0;
	if (!r->tried && !(r->tried = json_object_new_object()))
		return -ENOMEM;
	k = list_incidents(u->dir, &r->v, &r->n);
	if (k < 0)
		return k;
	r->present = calloc(r->n + 1, sizeof(*r->present));
	if (!r->present)
		return -ENOMEM;
	for (size_t i = 0; i < r->n; i++)
		r->present[i] = r->v[i].name;
	for (size_t i = 0; i < r->n; i++) {
		const char *name = r->v[i].name;

		if (state_has(u, name, r->v[i].size)) {
			r->already++;
			continue;
		}
		/* a failure is tried again by the next run, not this one */
		if (json_object_object_get_ex(r->tried, name, NULL))
			continue;
		if (r->unreachable || r->tried_n == u->f->conf.upload_queue) {
			r->waiting++;
			continue;
		}
		r->tried_n++;
		json_object_object_add(r->tried, name, NULL);
		switch (upload_one(u, name)) {
		case UPLOADED:
			r->sent++;
			/* kept after each one: a run cut short loses none */
			k = state_save(u, r->present, r->n);
			if (k < 0)
				return k;
			break;
		case GONE:
			break;
		case UNREACHABLE:
			r->unreachable = true;
			r->failed++;
			break;
		case REFUSED:
			r->failed++;
			break;
		}
	}
	return 0;
}

/* $STATE_DIRECTORY (the unit's StateDirectory=; the first of a list),
 * else the default.  Caller frees. */
static char *default_state_path(void)
{
	const char *e = getenv("STATE_DIRECTORY");
	char *s;

	if (e && *e && *e == '/') {
		if (asprintf(&s, "%.*s/%s", (int)strcspn(e, ":"), e, FR_UPLOAD_STATE_NAME) < 0)
			return NULL;
		return s;
	}
	(void)mkdir(FR_UPLOAD_STATE_DIR, 0750);
	return strdup(FR_UPLOAD_STATE_DIR "/" FR_UPLOAD_STATE_NAME);
}

/* Holds the state file's lock until the run ends: two runs at once (the
 * unit's and one by hand) would send the same incidents twice. */
static int lock_state(const char *path)
{
	_cleanup_free_ char *lock = NULL;
	int fd;

	if (asprintf(&lock, "%s.lock", path) < 0)
		return -ENOMEM;
	fd = open(lock, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0640);
	if (fd < 0 || flock(fd, LOCK_EX) < 0) {
		int k = negative_errno();
		frctl_error("upload: cannot lock %s: %s", lock, strerror(-k));
		if (fd >= 0)
			close(fd);
		return k;
	}
	return fd;
}

static int setup_curl(struct uploader *u, const char *netrc)
{
	u->curl = dl_curl_easy_init();
	u->headers = dl_curl_slist_append(NULL, "Content-Type: application/octet-stream");
	if (!u->curl || !u->headers)
		return -ENOMEM;
	/* the certificate is checked (libcurl's default, said here so that
	 * no one changes it by accident); no redirects: a PUT's body is not
	 * sent on to where a redirect points */
	if (dl_curl_easy_setopt(u->curl, CURLOPT_UPLOAD, 1L) != CURLE_OK ||
	    dl_curl_easy_setopt(u->curl, CURLOPT_PROTOCOLS_STR, "http,https") != CURLE_OK ||
	    dl_curl_easy_setopt(u->curl, CURLOPT_SSL_VERIFYPEER, 1L) != CURLE_OK ||
	    dl_curl_easy_setopt(u->curl, CURLOPT_SSL_VERIFYHOST, 2L) != CURLE_OK ||
	    dl_curl_easy_setopt(u->curl, CURLOPT_FOLLOWLOCATION, 0L) != CURLE_OK ||
	    dl_curl_easy_setopt(u->curl, CURLOPT_TIMEOUT_MS, (long)u->timeout_ms) != CURLE_OK ||
	    dl_curl_easy_setopt(u->curl, CURLOPT_NOSIGNAL, 1L) != CURLE_OK ||
	    dl_curl_easy_setopt(u->curl, CURLOPT_USERAGENT, "flightrec/" FR_VERSION) != CURLE_OK ||
	    dl_curl_easy_setopt(u->curl, CURLOPT_HTTPHEADER, u->headers) != CURLE_OK ||
	    dl_curl_easy_setopt(u->curl, CURLOPT_ERRORBUFFER, u->err) != CURLE_OK ||
	    dl_curl_easy_setopt(u->curl, CURLOPT_READFUNCTION, read_body) != CURLE_OK ||
	    dl_curl_easy_setopt(u->curl, CURLOPT_SEEKFUNCTION, seek_body) != CURLE_OK)
		return -EINVAL;
	/* a user name in the URL picks its entry; else the host's */
	if (netrc && (dl_curl_easy_setopt(u->curl, CURLOPT_NETRC, (long)CURL_NETRC_OPTIONAL) != CURLE_OK ||
		      dl_curl_easy_setopt(u->curl, CURLOPT_NETRC_FILE, netrc) != CURLE_OK))
		return -EINVAL;
	return 0;
}

int verb_upload(struct frctl *f, int argc, char **argv)
{
	static const struct option opts[] = {
		FRCTL_GLOBAL_OPTIONS,
		{ "state", required_argument, NULL, 0x200 },
		{ "help", no_argument, NULL, 'h' },
		{},
	};
	struct uploader u = { .f = f };
	_cleanup_free_ char *dir = NULL, *state = NULL;
	_cleanup_close_ int lock = -EBADF;
	struct run r = {};
	int c, ret = EXIT_FAILURE_;

	while ((c = getopt_long(argc, argv, "c:s:h", opts, NULL)) >= 0) {
		if (frctl_global_option(f, c, optarg))
			continue;
		if (c == 0x200) {
			u.state_path = optarg;
			continue;
		}
		if (c == 'h') {
			fputs(usage, stdout);
			return EXIT_OK;
		}
		return frctl_bad_option("upload", argv);
	}
	if (optind < argc) {
		frctl_error("upload: unexpected argument '%s'. Try 'frctl upload --help'.", argv[optind]);
		return EXIT_USAGE;
	}
	if (frctl_load_conf(f) < 0)
		return EXIT_USAGE;
	if (!f->conf.upload_url) {
		printf("Uploads are off: upload.url is not set in %s.\n", f->config_path);
		return EXIT_OK;
	}
	if (load_curl() < 0)
		return EXIT_FAILURE_;
	if (dl_curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
		frctl_error("upload: cannot initialize libcurl");
		return EXIT_FAILURE_;
	}
	u.timeout_ms = f->conf.upload_timeout_ns / 1000000;
	u.to_journal = journal_is_stderr();
	if (parse_base(&u, f->conf.upload_url) < 0) {
		ret = EXIT_USAGE;
		goto out;
	}
	/* libcurl would go on without the credentials of a file it cannot
	 * read, and the server refuse every upload */
	if (f->conf.upload_netrc && access(f->conf.upload_netrc, R_OK) < 0) {
		frctl_error("upload: upload.netrc \"%s\" in %s: %s", f->conf.upload_netrc, f->config_path, strerror(errno));
		ret = EXIT_USAGE;
		goto out;
	}
	if (!u.state_path)
		u.state_path = state = default_state_path();
	if (!u.state_path || asprintf(&dir, "%s/%s", frctl_store_path(f), FR_INCIDENT_DIR) < 0 ||
	    setup_curl(&u, f->conf.upload_netrc) < 0) {
		frctl_error("upload: out of memory");
		goto out;
	}
	u.dir = dir;
	lock = lock_state(u.state_path);
	if (lock < 0 || state_load(&u) < 0)
		goto out;
	/* again while the daemon is writing an incident: this run may have
	 * been started by its temporary file, and the rename that completes
	 * it would find the unit still running and start nothing */
	for (;;) {
		if (upload_pass(&u, &r) < 0)
			goto out;
		if (r.unreachable || r.tried_n == f->conf.upload_queue || !incident_in_progress(dir))
			break;
		for (unsigned i = 0; i < 100 && incident_in_progress(dir); i++)
			(void)usleep(100 * 1000);
	}
	if (r.waiting && r.unreachable)
		fprintf(stderr, "frctl: upload: %zu older incident%s not uploaded yet wait%s for the next run (the server did not answer).\n",
			r.waiting, r.waiting == 1 ? "" : "s", r.waiting == 1 ? "s" : "");
	else if (r.waiting)
		fprintf(stderr, "frctl: upload: %zu older incident%s not uploaded yet wait%s for the next run (upload.queue = %" PRIu32 " per run).\n",
			r.waiting, r.waiting == 1 ? "" : "s", r.waiting == 1 ? "s" : "", f->conf.upload_queue);
	/* in the journal, a run that found nothing new (most that the path
	 * unit starts: the daemon's other writes there) says nothing */
	if (!u.to_journal || r.tried_n || r.waiting)
		printf("%zu uploaded, %zu failed, %zu waiting, %zu uploaded before.\n", r.sent, r.failed, r.waiting,
		       r.already);
	/* entries of incidents removed since go (saved already after an upload) */
	if (!r.sent && (size_t)json_object_object_length(u.done) != r.already && state_save(&u, r.present, r.n) < 0)
		goto out;
	ret = r.failed ? EXIT_FAILURE_ : EXIT_OK;
out:
	run_done(&r);
	json_object_put(u.done);
	dl_curl_easy_cleanup(u.curl);
	dl_curl_slist_free_all(u.headers);
	dl_curl_url_cleanup(u.base);
	dl_curl_global_cleanup();
	return ret;
}
