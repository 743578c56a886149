// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * settings.c - system-wide settings changed for a run and put back
 * (settings.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "script/script.h"
#include "system/keeper.h"
#include "system/settings.h"
#include "system/syslock.h"

#define THP_DIR "/sys/kernel/mm/transparent_hugepage"
#define MAX_PUSHED 32

struct pushed {
	char path[PATH_MAX];
	char old[256];
	long keeper;
	bool unchanged;		/* it had the value already: neither written nor written back */
};

/* The CLI's main thread only. */
static struct pushed pushed[MAX_PUSHED];
static int nr_pushed;

const char *setting_path(const char *name)
{
	static char buf[PATH_MAX];
	enum script_knob_file file;
	unsigned int kb;

	if (!strcmp(name, "thp"))
		return THP_DIR "/enabled";
	if (!strcmp(name, "thp_defrag"))
		return THP_DIR "/defrag";
	if (!strcmp(name, "thp_shmem"))
		return THP_DIR "/shmem_enabled";
	if (!script_knob_file(name, &file, &kb) && kb) {
		snprintf(buf, sizeof(buf), THP_DIR "/hugepages-%ukB/%s", kb,
			 file == KNOB_MTHP ? "enabled" : "shmem_enabled");
		return buf;
	}
	if (!strcmp(name, "max_map_count"))
		return "/proc/sys/vm/max_map_count";
	if (!strncmp(name, "khugepaged.", 11) && name[11] && !strchr(name + 11, '/') &&
	    strcmp(name + 11, ".") && strcmp(name + 11, "..")) {
		snprintf(buf, sizeof(buf), THP_DIR "/khugepaged/%s", name + 11);
		return buf;
	}
	return NULL;
}

/* The current value: the selected word of a choice file ("[madvise]"), or the text. */
static int read_value(const char *path, char *out, size_t len)
{
	char buf[256], *lb, *rb;
	ssize_t n;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return -errno;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n < 0)
		return -errno;
	buf[n] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
	lb = strchr(buf, '[');
	rb = lb ? strchr(lb, ']') : NULL;
	if (lb && rb) {
		*rb = '\0';
		snprintf(out, len, "%s", lb + 1);
	} else {
		snprintf(out, len, "%s", buf);
	}
	return 0;
}

static int write_value(const char *path, const char *value)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC), ret = 0;

	if (fd < 0)
		return -errno;
	if (write(fd, value, strlen(value)) < 0)
		ret = -errno;
	close(fd);
	return ret;
}

int setting_push(const char *path, const char *value, char *err, size_t errlen)
{
	struct pushed *p;
	int ret;

	if (nr_pushed == MAX_PUSHED) {
		snprintf(err, errlen, "too many settings changed at once");
		return -ENOSPC;
	}
	if (geteuid() != 0) {
		snprintf(err, errlen, "changing %s needs root", path);
		return -EPERM;
	}
	/*
	 * The lock first, then the value before: read while waiting for the
	 * lock, it was the holder's temporary value, and ours would have put
	 * that back for good.
	 */
	ret = syslock_take();
	if (ret) {
		snprintf(err, errlen, "system-state lock: %s", strerror(-ret));
		return ret;
	}
	p = &pushed[nr_pushed];
	snprintf(p->path, sizeof(p->path), "%s", path);
	ret = read_value(path, p->old, sizeof(p->old));
	if (ret) {
		snprintf(err, errlen, "%s: %s", path, strerror(-ret));
		return ret;
	}
	/*
	 * Already so (a run's second set of the same knobs: vmalock fuzz
	 * confirms on fresh targets while its own are alive): not written,
	 * since the kernel judges a write against the other knobs - with
	 * hugepages-2048kB.shmem at never, even shmem_enabled's own "force"
	 * is refused - and so not written back either.
	 */
	p->unchanged = !strcmp(p->old, value);
	if (p->unchanged) {
		p->keeper = 0;
		nr_pushed++;
		return 0;
	}
	/* The old value is registered before the new one is written. */
	p->keeper = keeper_add(KEEPER_WRITE, path, p->old);
	if (p->keeper < 0) {
		ret = (int)p->keeper;
		snprintf(err, errlen, "cannot start the keeper that restores %s if vmalock dies: "
			 "%s", path, strerror(-ret));
		return ret;
	}
	ret = write_value(path, value);
	if (ret) {
		snprintf(err, errlen, "%s: writing '%s': %s", path, value, strerror(-ret));
		keeper_done(p->keeper);
		return ret;
	}
	nr_pushed++;
	return 0;
}

int setting_depth(void)
{
	return nr_pushed;
}

void setting_pop_all(void)
{
	setting_pop_to(0);
}

void setting_pop_to(int depth)
{
	while (nr_pushed > depth) {
		struct pushed *p = &pushed[--nr_pushed];
		int ret;

		if (p->unchanged)
			continue;
		ret = write_value(p->path, p->old);

		if (ret) {
			/* Left to the keeper, which tries again when we exit. */
			fprintf(stderr, "vmalock: restoring %s to '%s': %s\n", p->path, p->old,
				strerror(-ret));
			continue;
		}
		keeper_done(p->keeper);
	}
}
