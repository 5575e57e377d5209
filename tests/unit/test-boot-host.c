/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The host a boot recorded on (lib/boot-host.c): round trip, a second save
 * of the same host is a no-op and of another one replaces it, the newest
 * 16 boots kept, and what a reader refuses (a link, a file too large, not
 * JSON). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "boot-host.h"
#include "test.h"

static unsigned count_files(int dfd)
{
	struct json_object *all = fr_boot_hosts_load(dfd);
	unsigned n = (unsigned)json_object_object_length(all);

	json_object_put(all);
	return n;
}

int main(void)
{
	char tmpl[] = "/tmp/fr-test-boot-host-XXXXXX", path[256];
	const uint8_t boot[16] = { 0x60, 0x1d, 0xe5, 0x70, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12 };
	struct fr_boot_host h, back;
	struct json_object *all, *o, *v;
	char *dir = mkdtemp(tmpl);
	int dfd, fd;

	CHECK(dir != NULL);
	dfd = open(dir, O_RDONLY | O_DIRECTORY);
	CHECK_EQ(fr_boot_host_load(dfd, boot, &back), -ENOENT);
	CHECK_EQ(fr_boot_host_current(&h), 0);
	CHECK(*h.host && *h.kernel && *h.machine);
	CHECK_EQ(fr_boot_host_save(dfd, boot, &h), 1);
	CHECK_EQ(fr_boot_host_save(dfd, boot, &h), 0);
	CHECK_EQ(fr_boot_host_load(dfd, boot, &back), 0);
	CHECK(memcmp(&h, &back, sizeof(h)) == 0);
	/* renamed in the same boot: the file says the new name */
	snprintf(h.host, sizeof(h.host), "renamed");
	CHECK_EQ(fr_boot_host_save(dfd, boot, &h), 1);
	CHECK_EQ(fr_boot_host_load(dfd, boot, &back), 0);
	CHECK_STR(back.host, "renamed");
	CHECK(fr_boot_host_disk_usage(dfd) > 0);

	all = fr_boot_hosts_load(dfd);
	CHECK(json_object_object_get_ex(all, "601de5700102030405060708090a0b0c", &o));
	CHECK(json_object_object_get_ex(o, "host", &v) && strcmp(json_object_get_string(v), "renamed") == 0);
	json_object_put(all);

	/* only the newest boots are kept */
	for (int i = 0; i < FR_BOOT_HOST_KEEP + 2; i++) {
		uint8_t id[16] = { 0 };
		id[15] = (uint8_t)(i + 1);
		CHECK_EQ(fr_boot_host_save(dfd, id, &h), 1);
		usleep(2000); /* distinct modification times */
	}
	CHECK_EQ(count_files(dfd), FR_BOOT_HOST_KEEP);
	CHECK_EQ(fr_boot_host_load(dfd, boot, &back), -ENOENT);

	/* what a reader refuses: a link (to a file it could read), a file
	 * too large, one that is not a JSON object */
	{
		uint8_t id[16] = { 0xee };
		snprintf(path, sizeof(path), "%s/hosts/ee000000000000000000000000000000.json", dir);
		CHECK_EQ(symlink("/etc/hostname", path), 0);
		CHECK_EQ(fr_boot_host_load(dfd, id, &back), -EBADMSG);
		/* and a save replaces the link, not what it points to */
		CHECK_EQ(fr_boot_host_save(dfd, id, &h), 1);
		struct stat st;
		CHECK(lstat(path, &st) == 0 && S_ISREG(st.st_mode));
		unlink(path);
		fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0600);
		for (int i = 0; i < FR_BOOT_HOST_MAX + 1; i++)
			CHECK_EQ(write(fd, " ", 1), 1);
		close(fd);
		CHECK_EQ(fr_boot_host_load(dfd, id, &back), -EBADMSG);
		fd = open(path, O_WRONLY | O_TRUNC);
		CHECK_EQ(write(fd, "[1,2]", 5), 5);
		close(fd);
		CHECK_EQ(fr_boot_host_load(dfd, id, &back), -EBADMSG);
		unlink(path);
	}

	{
		char cmd[300];
		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
		CHECK_EQ(system(cmd), 0);
	}
	close(dfd);
	return TEST_DONE();
}
