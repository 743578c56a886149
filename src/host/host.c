// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * host.c - the host profile: what this machine's kernel does, measured.
 *
 * Two hosts of the same kind, same kernel release, differed in ways that
 * change every smaps the corpus records: one was booted without the zero
 * page, the other has it, protection keys and a DAMON thread. No setting
 * is taken for granted here. Files that state a setting (sysfs, sysctl,
 * the kernel config) are read; what no file states is found by experiment
 * in this process, on memory and a small file of its own:
 *
 *   zero page       read 4 untouched private anonymous pages: Rss 0 or 16 kB
 *   huge zero page  read a THP-eligible 2 MiB range: Rss 0 or 2048 kB
 *   protection keys does /proc/self/smaps print "ProtectionKey:"?
 *   anon VMA names  does prctl(PR_SET_VMA_ANON_NAME) succeed?
 *   fault-around    read one page in the middle of a cached 2 MiB file
 *                   mapping: the Rss of the mapping is the window
 *   file folios     write a file as the live side writes its files, map it
 *                   and read each page's folio from pagemap + kpageflags
 *
 * The experiments take a few milliseconds. Nothing here changes the system.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/vfs.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>

#include "host/host.h"
#include "util/json.h"
#include "vmalock/proc.h"
#include "util/vocab.h"

#ifndef PR_SET_VMA
#define PR_SET_VMA 0x53564d41
#define PR_SET_VMA_ANON_NAME 0
#endif
#ifndef MADV_HUGEPAGE
#define MADV_HUGEPAGE 14
#endif

#define THP_DIR "/sys/kernel/mm/transparent_hugepage"
#define DAMON_DIR "/sys/kernel/mm/damon/admin/kdamonds"
#define SZ_2M (2UL << 20)

/* ---- reading what files say ---- */

/* The first line of @path, without its newline. Return: 0 or -errno. */
static int read_line(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "r");
	int ret = 0;

	if (!f)
		return -errno;
	if (!fgets(buf, (int)len, f))
		ret = -EIO;
	else
		buf[strcspn(buf, "\n")] = '\0';
	fclose(f);
	return ret;
}

static int read_ulong(const char *path, unsigned long *out)
{
	char buf[64], *end;
	int ret = read_line(path, buf, sizeof(buf));

	if (ret)
		return ret;
	errno = 0;
	*out = strtoul(buf, &end, 10);
	return errno || end == buf ? -EINVAL : 0;
}

static unsigned int read_uint_or0(const char *path)
{
	unsigned long v = 0;

	return read_ulong(path, &v) ? 0 : (unsigned int)v;
}

/* The selected word of a sysfs choice file: "always [madvise] never" -> "madvise". */
static void read_choice(const char *path, char *out, size_t len)
{
	char buf[256], *open, *close;

	out[0] = '\0';
	if (read_line(path, buf, sizeof(buf)))
		return;
	open = strchr(buf, '[');
	close = open ? strchr(open, ']') : NULL;
	if (!open || !close)
		return;
	*close = '\0';
	snprintf(out, len, "%s", open + 1);
}

/* A "Key:   N kB" line of /proc/meminfo, in bytes; 0 if absent. */
static uint64_t meminfo_bytes(const char *key)
{
	FILE *f = fopen("/proc/meminfo", "r");
	char line[256];
	size_t n = strlen(key);
	uint64_t v = 0;

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f)) {
		if (!strncmp(line, key, n) && line[n] == ':') {
			v = strtoull(line + n + 1, NULL, 10) * 1024;
			break;
		}
	}
	fclose(f);
	return v;
}

/* Nodes in a cpulist-style range list ("0", "0-1,3"). */
static unsigned int count_list(const char *s)
{
	unsigned int n = 0;

	while (*s) {
		char *end;
		unsigned long a = strtoul(s, &end, 10), b = a;

		if (end == s)
			break;
		if (*end == '-')
			b = strtoul(end + 1, &end, 10);
		if (b >= a)
			n += (unsigned int)(b - a + 1);
		s = *end == ',' ? end + 1 : end;
		if (*end != ',')
			break;
	}
	return n;
}

/*
 * CONFIG_HZ and the preemption model from the kernel's config: /proc/config.gz
 * (IKCONFIG_PROC) or /boot/config-RELEASE. Return: 0 found, -ENOENT.
 */
static int read_kernel_config(struct host_profile *p)
{
	char path[PATH_MAX], line[256];
	const char *paths[2] = { "/proc/config.gz", path };
	int found = -ENOENT;

	snprintf(path, sizeof(path), "/boot/config-%s", p->kernel_release);
	for (int i = 0; i < 2 && found; i++) {
		gzFile gz = gzopen(paths[i], "r");	/* reads plain files too */

		if (!gz)
			continue;
		while (gzgets(gz, line, sizeof(line))) {
			unsigned int hz;

			if (sscanf(line, "CONFIG_HZ=%u", &hz) == 1) {
				p->hz = hz;
				snprintf(p->hz_source, sizeof(p->hz_source), "%s", paths[i]);
				found = 0;
			} else if (!strncmp(line, "CONFIG_PREEMPT_NONE=y", 21)) {
				snprintf(p->preempt, sizeof(p->preempt), "none");
			} else if (!strncmp(line, "CONFIG_PREEMPT_VOLUNTARY=y", 26)) {
				snprintf(p->preempt, sizeof(p->preempt), "voluntary");
			} else if (!strncmp(line, "CONFIG_PREEMPT=y", 16)) {
				snprintf(p->preempt, sizeof(p->preempt), "full");
			} else if (!strncmp(line, "CONFIG_PREEMPT_LAZY=y", 21)) {
				snprintf(p->preempt, sizeof(p->preempt), "lazy");
			} else if (!strncmp(line, "CONFIG_PREEMPT_RT=y", 19)) {
				snprintf(p->preempt, sizeof(p->preempt), "rt");
			}
		}
		gzclose(gz);
	}
	return found;
}

/* `preempt=` on the command line overrides the configured model (PREEMPT_DYNAMIC). */
static void read_preempt_cmdline(struct host_profile *p)
{
	char buf[4096], *s;

	if (read_line("/proc/cmdline", buf, sizeof(buf)))
		return;
	for (s = strstr(buf, "preempt="); s; s = strstr(s + 1, "preempt=")) {
		if (s != buf && s[-1] != ' ')
			continue;
		s += strlen("preempt=");
		snprintf(p->preempt, sizeof(p->preempt), "%.*s", (int)strcspn(s, " "), s);
		return;
	}
}

static void read_thp(struct host_profile *p)
{
	char path[PATH_MAX];
	DIR *d;
	struct dirent *e;

	read_choice(THP_DIR "/enabled", p->thp_enabled, sizeof(p->thp_enabled));
	read_choice(THP_DIR "/defrag", p->thp_defrag, sizeof(p->thp_defrag));
	read_choice(THP_DIR "/shmem_enabled", p->thp_shmem_enabled, sizeof(p->thp_shmem_enabled));
	p->khugepaged.defrag = read_uint_or0(THP_DIR "/khugepaged/defrag");
	p->khugepaged.max_ptes_none = read_uint_or0(THP_DIR "/khugepaged/max_ptes_none");
	p->khugepaged.max_ptes_swap = read_uint_or0(THP_DIR "/khugepaged/max_ptes_swap");
	p->khugepaged.max_ptes_shared = read_uint_or0(THP_DIR "/khugepaged/max_ptes_shared");
	p->khugepaged.pages_to_scan = read_uint_or0(THP_DIR "/khugepaged/pages_to_scan");
	p->khugepaged.scan_sleep_ms = read_uint_or0(THP_DIR "/khugepaged/scan_sleep_millisecs");
	p->khugepaged.alloc_sleep_ms = read_uint_or0(THP_DIR "/khugepaged/alloc_sleep_millisecs");

	d = opendir(THP_DIR);
	if (!d)
		return;
	while ((e = readdir(d)) && p->nr_mthp < HOST_MAX_MTHP) {
		struct host_mthp *m = &p->mthp[p->nr_mthp];
		unsigned int kb;

		if (sscanf(e->d_name, "hugepages-%ukB", &kb) != 1)
			continue;
		memset(m, 0, sizeof(*m));
		m->kb = kb;
		snprintf(path, sizeof(path), THP_DIR "/%s/enabled", e->d_name);
		read_choice(path, m->enabled, sizeof(m->enabled));
		snprintf(path, sizeof(path), THP_DIR "/%s/shmem_enabled", e->d_name);
		read_choice(path, m->shmem_enabled, sizeof(m->shmem_enabled));
		p->nr_mthp++;
	}
	closedir(d);
	/* Smallest first, so that two profiles list them alike. */
	for (unsigned int i = 1; i < p->nr_mthp; i++)
		for (unsigned int j = i; j > 0 && p->mthp[j - 1].kb > p->mthp[j].kb; j--) {
			struct host_mthp t = p->mthp[j];

			p->mthp[j] = p->mthp[j - 1];
			p->mthp[j - 1] = t;
		}
}

/*
 * Swap devices from /proc/swaps (sizes in KiB), leaving out the swap files
 * vmalock itself turns on for a script (target_swap.c): the profile says
 * what the host has, and a script's own swap is added where it is in use.
 */
static void read_swap(struct host_profile *p)
{
	FILE *f = fopen("/proc/swaps", "r");
	char line[512], name[PATH_MAX];

	if (!f)
		return;
	if (fgets(line, sizeof(line), f)) {	/* the header */
		while (fgets(line, sizeof(line), f)) {
			unsigned long long size, used;
			char type[32];

			if (sscanf(line, "%4095s %31s %llu %llu", name, type, &size, &used) != 4)
				continue;
			if (strstr(name, "/" HOST_SWAP_PREFIX))
				continue;
			p->nr_swap_devices++;
			p->swap_total_bytes += size * 1024;
			p->swap_free_bytes += (size - used) * 1024;
		}
	}
	fclose(f);
}

/* Running kdamond threads, and what the first DAMON context does. */
static void read_damon(struct host_profile *p)
{
	DIR *d = opendir("/proc");
	struct dirent *e;
	char path[PATH_MAX], comm[64];

	if (d) {
		while ((e = readdir(d))) {
			if (e->d_name[0] < '0' || e->d_name[0] > '9')
				continue;
			snprintf(path, sizeof(path), "/proc/%s/comm", e->d_name);
			if (!read_line(path, comm, sizeof(comm)) && !strncmp(comm, "kdamond.", 8))
				p->nr_kdamonds++;
		}
		closedir(d);
	}
	if (!p->nr_kdamonds)
		return;
	read_line(DAMON_DIR "/0/contexts/0/operations", p->damon_ops, sizeof(p->damon_ops));
	for (unsigned int i = 0; i < 8; i++) {
		char act[32];
		size_t n = strlen(p->damon_actions);

		snprintf(path, sizeof(path), DAMON_DIR "/0/contexts/0/schemes/%u/action", i);
		if (read_line(path, act, sizeof(act)))
			break;
		snprintf(p->damon_actions + n, sizeof(p->damon_actions) - n, "%s%s",
			 n ? "," : "", act);
	}
}

/* ---- experiments ---- */

/* The value in kB of @field ("Rss") in /proc/self/smaps for the VMA at @addr; -1 if none. */
static long smaps_kb(unsigned long addr, const char *field)
{
	FILE *f = fopen("/proc/self/smaps", "r");
	char line[512];
	size_t n = strlen(field);
	bool in = false;
	long kb = -1;

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		unsigned long start, end;

		/* A record's header: "start-end perms ..."; field lines never parse so. */
		if (sscanf(line, "%lx-%lx ", &start, &end) == 2) {
			if (in)
				break;
			in = start == addr;
		} else if (in && !strncmp(line, field, n) && line[n] == ':') {
			kb = strtol(line + n + 1, NULL, 10);
			break;
		}
	}
	fclose(f);
	return kb;
}

/* Is there a "ProtectionKey:" line in smaps? (x86 with OSPKE, arm64 with POE) */
static bool probe_pkeys(void)
{
	FILE *f = fopen("/proc/self/smaps", "r");
	char line[512];
	bool found = false;

	if (!f)
		return false;
	while (!found && fgets(line, sizeof(line), f))
		found = !strncmp(line, "ProtectionKey:", 14);
	fclose(f);
	return found;
}

/* What the last failed host_probe() of this thread could not measure. */
static __thread char probe_failure[160];

static void __attribute__((format(printf, 1, 2))) probe_failed(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(probe_failure, sizeof(probe_failure), fmt, ap);
	va_end(ap);
}

const char *host_probe_failure(int ret)
{
	return probe_failure[0] ? probe_failure : strerror(-ret);
}

/* 2 MiB-aligned, 2 MiB of private anonymous memory inside a 4 MiB reservation. */
static char *map_aligned_2m(void **res)
{
	char *r = mmap(NULL, 2 * SZ_2M, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
		       -1, 0);
	char *a;

	if (r == MAP_FAILED)
		return NULL;
	*res = r;
	a = (char *)(((unsigned long)r + SZ_2M - 1) & ~(SZ_2M - 1));
	return a;
}

static int probe_zero_pages(struct host_profile *p)
{
	long ps = p->page_size;
	volatile char *a = mmap(NULL, 4 * ps, PROT_READ | PROT_WRITE,
				MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	void *res;
	char *h;
	long rss;
	char sink = 0;

	if (a == MAP_FAILED)
		return -errno;
	/* Keep the range out of THP whatever the mode, so only the small zero page answers. */
	madvise((void *)a, 4 * ps, 15 /* MADV_NOHUGEPAGE */);
	for (int i = 0; i < 4; i++)
		sink += a[i * ps];
	rss = smaps_kb((unsigned long)a, "Rss");
	munmap((void *)a, 4 * ps);
	if (rss < 0)
		return -EIO;
	p->zero_page = rss == 0;

	/* The huge zero page answers only where THP applies to the read. */
	p->huge_zero_page = false;
	if (!strcmp(p->thp_enabled, "never"))
		return 0;
	h = map_aligned_2m(&res);
	if (!h)
		return -errno;
	if (mmap(h, SZ_2M, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED,
		 -1, 0) == MAP_FAILED) {
		munmap(res, 2 * SZ_2M);
		return -errno;
	}
	madvise(h, SZ_2M, MADV_HUGEPAGE);
	sink += *(volatile char *)h;
	rss = smaps_kb((unsigned long)h, "Rss");
	munmap(res, 2 * SZ_2M);
	(void)sink;
	/* 0: the huge zero page; 2048: a real huge page; 4: no THP at all (then unknown). */
	if (rss == 0) {
		p->huge_zero_page = true;
	} else if (rss < 2048) {
		unsigned long use = 0;

		read_ulong(THP_DIR "/use_zero_page", &use);
		p->huge_zero_page = use && p->zero_page;
	}
	return 0;
}

static bool probe_anon_vma_name(long ps)
{
	void *a = mmap(NULL, ps, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	bool ok;

	if (a == MAP_FAILED)
		return false;
	ok = prctl(PR_SET_VMA, PR_SET_VMA_ANON_NAME, (unsigned long)a, ps,
		   (unsigned long)"vmalock-probe") == 0;
	munmap(a, ps);
	return ok;
}

/*
 * Read one page in the middle of a 2 MiB file mapping whose pages are all
 * cached (written a page at a time, so small folios): fault-around maps the
 * cached pages of its aligned window, so the mapping's Rss is the window.
 *
 * "All cached" must hold at the read. fault-around skips a page that is not
 * cached - a clean page of ours can be reclaimed in between (DAMON's pageout
 * scheme on our machines drops file pages of physical regions it found cold,
 * which a newly written page can land in) - and a page it cannot lock, one
 * the flusher is starting to write back say (a concurrent `sync` loop made
 * one probe in 200 read 4 kB). So the pages stay dirty (reclaim outside
 * kswapd does not write them), any page mincore() misses is written again
 * before the read, a read counts only if every page is still cached after it
 * (then none was dropped meanwhile: nothing but our writes brings one back),
 * and the window is the largest Rss of three reads that count.
 */
static bool all_cached(const char *a, unsigned long len, long ps, unsigned char *vec)
{
	if (mincore((void *)a, len, vec))
		return false;
	for (unsigned long i = 0; i < len / ps; i++)
		if (!(vec[i] & 1))
			return false;
	return true;
}

static int probe_fault_around_once(int fd, const char *page, long ps, long *rss, bool *counts)
{
	unsigned char vec[SZ_2M / 4096];	/* a page is at least 4 KiB */
	void *res = NULL;
	char *a = map_aligned_2m(&res);
	int ret = 0;

	if (!a)
		return -errno;
	if (mmap(a, SZ_2M, PROT_READ, MAP_SHARED | MAP_FIXED, fd, 0) == MAP_FAILED) {
		ret = -errno;
		goto out;
	}
	if (mincore(a, SZ_2M, vec)) {
		ret = -errno;
		goto out;
	}
	for (unsigned long i = 0; i < SZ_2M / ps && !ret; i++)
		if (!(vec[i] & 1) && pwrite(fd, page, ps, i * ps) != ps)
			ret = -EIO;
	if (!ret) {
		(void)*(volatile char *)(a + SZ_2M / 2);
		*rss = smaps_kb((unsigned long)a, "Rss");
		if (*rss <= 0)
			ret = -EIO;
		*counts = all_cached(a, SZ_2M, ps, vec);
	}
out:
	munmap(res, 2 * SZ_2M);
	return ret;
}

static int probe_fault_around(struct host_profile *p, const char *tmpdir)
{
	char path[PATH_MAX], *page;
	long ps = p->page_size, best = 0;
	int fd, ret = 0, counted = 0;

	snprintf(path, sizeof(path), "%s/vmalock-probe.XXXXXX", tmpdir);
	fd = mkstemp(path);
	if (fd < 0)
		return -errno;
	unlink(path);
	page = calloc(1, ps);
	if (!page) {
		close(fd);
		return -ENOMEM;
	}
	memset(page, 0x5a, ps);
	for (unsigned long off = 0; off < SZ_2M && !ret; off += ps)
		if (pwrite(fd, page, ps, off) != ps)
			ret = -EIO;
	for (int i = 0; i < 20 && counted < 3 && !ret; i++) {
		bool counts = false;
		long rss = 0;

		ret = probe_fault_around_once(fd, page, ps, &rss, &counts);
		if (counts) {
			counted++;
			best = rss > best ? rss : best;
		}
	}
	free(page);
	close(fd);
	if (ret)
		return ret;
	if (!counted) {
		probe_failed("fault-around: in 20 reads the page cache dropped pages of the "
			     "probe's file every time");
		return -EIO;
	}
	p->fault_around_bytes = (unsigned long)best * 1024;
	if (p->fault_around_bytes & (p->fault_around_bytes - 1)) {
		probe_failed("fault-around: a read mapped %ld kB of a cached file, which "
			     "is no power-of-two window", best);
		return -EIO;
	}
	return 0;
}

/*
 * Page-cache folio sizes. The live side writes a script's regular files in
 * 64 KiB write()s into $VMALOCK_TMPDIR or /tmp (src/spaces/target.c), and
 * the folios the filesystem makes for them show in smaps: a write fault
 * through a shared mapping dirties a whole folio, fault-around and mlock
 * treat a large folio as one. So the probe writes a file there the same way
 * - 256 KiB and a 24 KiB tail - maps it, reads every page and looks up each
 * page's frame in /proc/self/pagemap and its flags in /proc/kpageflags: a
 * compound head followed by tails at the next frames is one folio. The
 * largest is the filesystem's limit for a write chunk (ext4 with large
 * folios: 64+64+64+64+16+8 kB; small pages only: 4 kB each). Frames are
 * root's to see (pagemap gives 0 otherwise): without them it stays unknown.
 *
 * The pages must all be the written ones when they are looked up: a page
 * reclaim dropped (DAMON's pageout, see probe_fault_around) would come back
 * by readahead, in its own sizes. So the file is not synced (reclaim outside
 * kswapd does not write dirty pages back), and a look counts only if
 * mincore() finds every page cached before the reads and after the lookup.
 */
#define PROBE_CHUNK (64UL << 10)
#define PROBE_FILE_SIZE ((256UL + 24) << 10)
/* A head (KPF_COMPOUND_HEAD, bit 15) starts a run as a small page does: only tails count. */
#define KPF_COMPOUND_TAIL (1ULL << 16)
#define PM_PRESENT (1ULL << 63)
#define PM_PFN_MASK ((1ULL << 55) - 1)

/* The folio sizes in pages, in file order, of @nr mapped pages at @a. Return: 0 or -errno. */
static int folio_runs(const char *a, unsigned long nr, long ps, unsigned int *runs,
		      unsigned int *nr_runs)
{
	int pm = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
	int kf = open("/proc/kpageflags", O_RDONLY | O_CLOEXEC);
	uint64_t prev_pfn = 0;
	int ret = 0;

	*nr_runs = 0;
	if (pm < 0 || kf < 0) {
		ret = -errno;
		goto out;
	}
	for (unsigned long i = 0; i < nr && !ret; i++) {
		uint64_t ent, flags, pfn;

		if (pread(pm, &ent, 8, (off_t)((unsigned long)a / ps + i) * 8) != 8) {
			ret = -EIO;
			break;
		}
		pfn = ent & PM_PFN_MASK;
		if (!(ent & PM_PRESENT) || !pfn) {
			ret = (ent & PM_PRESENT) ? -EPERM : -EAGAIN;	/* 0: not root */
			break;
		}
		if (pread(kf, &flags, 8, (off_t)pfn * 8) != 8) {
			ret = -EIO;
			break;
		}
		/* A tail continues the folio before it only at the next frame. */
		if ((flags & KPF_COMPOUND_TAIL) && *nr_runs && pfn == prev_pfn + 1)
			runs[*nr_runs - 1]++;
		else if (flags & KPF_COMPOUND_TAIL)
			ret = -EAGAIN;		/* split or freed meanwhile: look again */
		else
			runs[(*nr_runs)++] = 1;
		prev_pfn = pfn;
	}
out:
	if (pm >= 0)
		close(pm);
	if (kf >= 0)
		close(kf);
	return ret;
}

/* What the model makes of @size bytes written in chunks with folios up to @max pages. */
static bool runs_follow_rule(const unsigned int *runs, unsigned int nr_runs, unsigned long size,
			     long ps, unsigned int max)
{
	unsigned long pos = 0, page = (unsigned long)ps;
	unsigned int i = 0;

	/* Ends: every step takes at least a page, and there are size / ps of them. */
	while (pos < size) {
		unsigned long left = PROBE_CHUNK - pos % PROBE_CHUNK, idx = pos / page;
		unsigned int pages = 1;

		left = left < size - pos ? left : size - pos;
		while (pages * 2 <= max && pages * 2 * page <= left && !(idx & (pages * 2 - 1)))
			pages *= 2;
		if (i == nr_runs || runs[i++] != pages)
			return false;
		pos += pages * page;
	}
	return i == nr_runs;
}

/* The filesystem's name for the probe line, from statfs's magic. */
static const char *fs_name(int fd)
{
	struct statfs s;

	if (fstatfs(fd, &s))
		return "?";
	switch ((unsigned long)s.f_type) {
	case 0xEF53: return "ext4";
	case 0x58465342: return "xfs";
	case 0x9123683E: return "btrfs";
	case 0x01021994: return "tmpfs";
	case 0xF2F52010: return "f2fs";
	case 0x2FC12FC1: return "zfs";
	case 0x794C7630: return "overlayfs";
	default: return "?";
	}
}

/* One look at the mapped file: the folio runs, or -EAGAIN if a page came or went. */
static int probe_file_folios_once(int fd, long ps, unsigned int *runs, unsigned int *nr_runs)
{
	unsigned long nr = PROBE_FILE_SIZE / ps;
	unsigned char vec[PROBE_FILE_SIZE / 4096];	/* a page is at least 4 KiB */
	char *a = mmap(NULL, PROBE_FILE_SIZE, PROT_READ, MAP_SHARED, fd, 0);
	char sink = 0;
	int ret = 0;

	if (a == MAP_FAILED)
		return -errno;
	if (!all_cached(a, PROBE_FILE_SIZE, ps, vec))
		ret = -EAGAIN;
	for (unsigned long i = 0; i < nr && !ret; i++)
		sink += *(volatile char *)(a + i * ps);
	(void)sink;
	if (!ret)
		ret = folio_runs(a, nr, ps, runs, nr_runs);
	if (!ret && !all_cached(a, PROBE_FILE_SIZE, ps, vec))
		ret = -EAGAIN;
	munmap(a, PROBE_FILE_SIZE);
	return ret;
}

/* "ext4: 64+64+16+8 kB" into p->file_folio_probe; 3 or more alike as "70*4". */
static void note_runs(struct host_profile *p, const char *fs, const unsigned int *runs,
		      unsigned int nr_runs, const char *why)
{
	char *b = p->file_folio_probe;
	size_t len = sizeof(p->file_folio_probe);
	size_t n = (size_t)snprintf(b, len, "%s: ", fs);

	for (unsigned int i = 0, j; i < nr_runs && n < len; i = j) {
		unsigned long kb = runs[i] * p->page_size / 1024;

		for (j = i + 1; j < nr_runs && runs[j] == runs[i]; j++)
			;
		if (j - i >= 3)
			n += (size_t)snprintf(b + n, len - n, "%s%u*%lu", i ? "+" : "", j - i, kb);
		else
			for (j = i; j < nr_runs && runs[j] == runs[i] && n < len; j++)
				n += (size_t)snprintf(b + n, len - n, "%s%lu", j ? "+" : "", kb);
	}
	if (n < len)
		snprintf(b + n, len - n, " kB%s", why);
}

/* Never fails the profile: what it cannot measure it leaves unknown, saying why. */
static void probe_file_folios(struct host_profile *p)
{
	const char *base = getenv("VMALOCK_TMPDIR");
	unsigned int runs[PROBE_FILE_SIZE / 4096], nr_runs = 0, max = 0;
	long ps = (long)p->page_size;
	char path[PATH_MAX], *chunk;
	const char *fs;
	int fd, ret = 0;

	p->file_folio_max_kb = 0;
	if (!base || !*base)
		base = "/tmp";
	snprintf(path, sizeof(path), "%s/vmalock-probe.XXXXXX", base);
	fd = mkstemp(path);
	chunk = malloc(PROBE_CHUNK);
	if (fd < 0 || !chunk) {
		snprintf(p->file_folio_probe, sizeof(p->file_folio_probe),
			 "a file in %s: %s", base, strerror(fd < 0 ? errno : ENOMEM));
		goto out;
	}
	unlink(path);
	fs = fs_name(fd);
	for (unsigned long i = 0; i < PROBE_CHUNK; i++)
		chunk[i] = (char)('a' + i % 26);
	for (unsigned long off = 0; off < PROBE_FILE_SIZE && !ret; off += PROBE_CHUNK) {
		size_t n = PROBE_FILE_SIZE - off < PROBE_CHUNK ? PROBE_FILE_SIZE - off : PROBE_CHUNK;

		if (write(fd, chunk, n) != (ssize_t)n)
			ret = -EIO;
	}
	/* Ends: at most 5 looks. */
	for (int i = 0; i < 5 && !ret; i++) {
		ret = probe_file_folios_once(fd, ps, runs, &nr_runs);
		if (ret != -EAGAIN)
			break;
	}
	if (ret) {
		snprintf(p->file_folio_probe, sizeof(p->file_folio_probe), "%s: %s", fs,
			 ret == -EPERM || ret == -EACCES ? "page frames need root" :
			 ret == -EAGAIN ? "its pages kept changing" : strerror(-ret));
		goto out;
	}
	for (unsigned int i = 0; i < nr_runs; i++)
		max = runs[i] > max ? runs[i] : max;
	if (!runs_follow_rule(runs, nr_runs, PROBE_FILE_SIZE, ps, max)) {
		note_runs(p, fs, runs, nr_runs, ", which no largest size explains");
		goto out;
	}
	p->file_folio_max_kb = (unsigned int)(max * ps / 1024);
	note_runs(p, fs, runs, nr_runs, "");
out:
	free(chunk);
	if (fd >= 0)
		close(fd);
}

/* ---- the profile ---- */

/*
 * The read-ahead window of the block device under @dir: its queue's
 * read_ahead_kb (the bdi's, which mmap read-around uses), the whole disk's
 * for a partition. 0 if there is none (tmpfs, a device without a queue).
 */
static unsigned long probe_readahead_kb(const char *dir)
{
	static const char *const paths[] = {
		"/sys/dev/block/%u:%u/queue/read_ahead_kb",
		"/sys/dev/block/%u:%u/../queue/read_ahead_kb",
		"/sys/class/bdi/%u:%u/read_ahead_kb",
	};
	struct stat st;
	char path[128];
	unsigned long kb;

	if (stat(dir, &st))
		return 0;
	for (size_t i = 0; i < sizeof(paths) / sizeof(paths[0]); i++) {
		snprintf(path, sizeof(path), paths[i], major(st.st_dev), minor(st.st_dev));
		if (!read_ulong(path, &kb))
			return kb;
	}
	return 0;
}

int host_probe(struct host_profile *p, const char *tmpdir)
{
	struct utsname u;
	struct rlimit rl;
	char buf[256];
	time_t now = time(NULL);
	unsigned long v;
	int ret;

	memset(p, 0, sizeof(*p));
	probe_failure[0] = '\0';
	if (!tmpdir)
		tmpdir = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
	snprintf(p->source, sizeof(p->source), "probed");
	if (uname(&u))
		return -errno;
	snprintf(p->hostname, sizeof(p->hostname), "%s", u.nodename);
	snprintf(p->kernel_release, sizeof(p->kernel_release), "%s", u.release);
	sscanf(u.release, "%u.%u", &p->kernel_major, &p->kernel_minor);
	strftime(p->date, sizeof(p->date), "%Y-%m-%dT%H:%M:%SZ", gmtime(&now));
	p->page_size = (unsigned long)sysconf(_SC_PAGESIZE);
	p->cpus = (unsigned int)sysconf(_SC_NPROCESSORS_ONLN);
	p->ram_bytes = meminfo_bytes("MemTotal");

	read_thp(p);
	read_swap(p);
	p->numa_nodes = read_line("/sys/devices/system/node/online", buf, sizeof(buf)) ? 1 :
			count_list(buf);
	if (!p->numa_nodes)
		p->numa_nodes = 1;
	p->max_map_count = read_ulong("/proc/sys/vm/max_map_count", &v) ? 65530 : v;
	p->overcommit_memory = read_ulong("/proc/sys/vm/overcommit_memory", &v) ? 0 : (int)v;
	p->overcommit_ratio = read_ulong("/proc/sys/vm/overcommit_ratio", &v) ? 50 : (unsigned)v;
	p->overcommit_kbytes = read_ulong("/proc/sys/vm/overcommit_kbytes", &v) ? 0 : v;
	if (getrlimit(RLIMIT_STACK, &rl))
		return -errno;
	p->stack_rlimit = rl.rlim_cur == RLIM_INFINITY ? UINT64_MAX : rl.rlim_cur;

	if (read_kernel_config(p)) {
		snprintf(p->hz_source, sizeof(p->hz_source),
			 "unknown (no /proc/config.gz or /boot/config-*)");
	}
	read_preempt_cmdline(p);
	/* RWSEM_WAIT_TIMEOUT = DIV_ROUND_UP(HZ, 250) jiffies; 4 ms if HZ is unknown. */
	p->handoff_ns = p->hz ? (uint64_t)((p->hz + 249) / 250) * 1000000000ull / p->hz :
				4000000ull;
	read_damon(p);

	p->pkeys = probe_pkeys();
	p->anon_vma_name = probe_anon_vma_name((long)p->page_size);
	probe_file_folios(p);
	ret = probe_zero_pages(p);
	if (ret && !probe_failure[0])
		probe_failed("the zero page: %s", strerror(-ret));
	p->readahead_kb = probe_readahead_kb(tmpdir);
	if (!ret) {
		ret = probe_fault_around(p, tmpdir);
		if (ret && !probe_failure[0])
			probe_failed("fault-around: %s", strerror(-ret));
	}
	return ret;
}

/* The sysfs words of the THP modes the model is configured with (util/vocab.h). */
#define W(word, mode) { .name = (word), .value = (mode) }
static const struct vml_vocab mthp_vocab = { "mTHP mode", (const struct vml_word[]){
	W("always", VML_MTHP_ALWAYS), W("madvise", VML_MTHP_MADVISE),
	W("inherit", VML_MTHP_INHERIT), W("never", VML_MTHP_NEVER), { .name = NULL } } };
static const struct vml_vocab shmem_huge_vocab = { "shmem_enabled", (const struct vml_word[]){
	W("never", VML_SHMEM_HUGE_NEVER), W("always", VML_SHMEM_HUGE_ALWAYS),
	W("within_size", VML_SHMEM_HUGE_WITHIN_SIZE), W("advise", VML_SHMEM_HUGE_ADVISE),
	W("deny", VML_SHMEM_HUGE_DENY), W("force", VML_SHMEM_HUGE_FORCE), { .name = NULL } } };
static const struct vml_vocab shmem_mthp_vocab = { "mTHP shmem_enabled", (const struct vml_word[]){
	W("inherit", VML_SHMEM_MTHP_INHERIT), W("never", VML_SHMEM_MTHP_NEVER),
	W("always", VML_SHMEM_MTHP_ALWAYS), W("within_size", VML_SHMEM_MTHP_WITHIN_SIZE),
	W("advise", VML_SHMEM_MTHP_ADVISE), { .name = NULL } } };
#undef W

/*
 * The value of sysfs @word in @v, or @fallback for "" (no such file) and
 * words the model does not know: never for an mTHP size and shmem_enabled,
 * the boot default for a size's shmem mode.
 */
static int sysfs_mode(const struct vml_vocab *v, const char *word, int fallback)
{
	const struct vml_word *w = vocab_find(v, word, strlen(word));

	return w ? w->value : fallback;
}

/* The folio order of a size in KiB, or -1 if it is no power-of-two multiple of pages. */
static int mthp_order(const struct host_profile *p, unsigned int kb)
{
	unsigned long pages = (unsigned long)kb * 1024 / p->page_size;

	if (!pages || (pages & (pages - 1)) || pages * p->page_size != (unsigned long)kb * 1024)
		return -1;
	return __builtin_ctzl(pages);
}

void host_profile_to_config(const struct host_profile *p, uint64_t extra_swap_bytes,
			    struct vml_sys_config *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->max_map_count = p->max_map_count;
	cfg->thp = !strcmp(p->thp_enabled, "always") ? VML_THP_ALWAYS :
		   !strcmp(p->thp_enabled, "madvise") ? VML_THP_MADVISE : VML_THP_NEVER;
	cfg->numa_nodes = p->numa_nodes;
	cfg->swap_pages = (p->swap_free_bytes + extra_swap_bytes) / p->page_size;
	cfg->fault_around_bytes = p->fault_around_bytes;
	cfg->file_ra_pages = p->readahead_kb * 1024 / p->page_size;
	/* unknown (0): the model's default, ext4's 64 KiB */
	cfg->file_folio_max_bytes = (unsigned long)p->file_folio_max_kb * 1024;
	cfg->mmap_lock_handoff_ns = p->handoff_ns;
	cfg->mmap_lock_tick_ns = p->hz ? 1000000000ull / p->hz : 0;
	cfg->anon_vma_name = p->anon_vma_name;
	cfg->use_zero_page = p->zero_page;
	cfg->use_huge_zero_page = p->huge_zero_page;
	cfg->pkeys = p->pkeys;
	cfg->ram_pages = p->ram_bytes / p->page_size;
	cfg->stack_rlimit = p->stack_rlimit > ULONG_MAX ? ULONG_MAX : p->stack_rlimit;
	cfg->overcommit = (enum vml_overcommit)p->overcommit_memory;
	cfg->shmem_huge = sysfs_mode(&shmem_huge_vocab, p->thp_shmem_enabled, VML_SHMEM_HUGE_NEVER);
	/* Each size the host has; a profile listing none keeps the boot defaults. */
	for (unsigned int i = 0; i < p->nr_mthp; i++) {
		int order = mthp_order(p, p->mthp[i].kb);

		if (order >= 2 && order < VML_THP_ORDERS)
			cfg->thp_anon[order] = sysfs_mode(&mthp_vocab, p->mthp[i].enabled, VML_MTHP_NEVER);
		if (order >= 1 && order < VML_THP_ORDERS)
			cfg->shmem_mthp[order] = sysfs_mode(&shmem_mthp_vocab,
							    p->mthp[i].shmem_enabled,
							    VML_SHMEM_MTHP_DEFAULT);
	}
}

/* Appends "name: a vs b" to @buf (separated by "; ") and counts it. */
struct diff_acc {
	char *buf;
	size_t len, used;
	int n;
};

__attribute__((format(printf, 2, 3)))
static void diff_add(struct diff_acc *d, const char *fmt, ...)
{
	va_list ap;

	d->n++;
	if (d->used >= d->len)
		return;
	if (d->used) {
		int k = snprintf(d->buf + d->used, d->len - d->used, "; ");

		d->used += k > 0 ? (size_t)k : 0;
		if (d->used >= d->len)
			return;
	}
	va_start(ap, fmt);
	int k = vsnprintf(d->buf + d->used, d->len - d->used, fmt, ap);
	va_end(ap);
	d->used += k > 0 ? (size_t)k : 0;
}

#define DIFF_BOOL(f) \
	do { if (a->f != b->f) diff_add(&d, #f ": %s vs %s", a->f ? "yes" : "no", \
					b->f ? "yes" : "no"); } while (0)
#define DIFF_ULONG(f) \
	do { if (a->f != b->f) diff_add(&d, #f ": %llu vs %llu", \
					(unsigned long long)a->f, (unsigned long long)b->f); } while (0)
#define DIFF_STR(f) \
	do { if (strcmp(a->f, b->f)) diff_add(&d, #f ": %s vs %s", \
					      *a->f ? a->f : "-", *b->f ? b->f : "-"); } while (0)

/* The mTHP setting of @kb in @p, or "" when the size does not exist there. */
static const struct host_mthp *find_mthp(const struct host_profile *p, unsigned int kb)
{
	for (unsigned int i = 0; i < p->nr_mthp; i++)
		if (p->mthp[i].kb == kb)
			return &p->mthp[i];
	return NULL;
}

/* What the model uses for @p's file folios: unknown is its default, 64 KiB (vml_sys_config). */
static unsigned int file_folio_kb(const struct host_profile *p)
{
	return p->file_folio_max_kb ? p->file_folio_max_kb : 64;
}

int host_profile_differences(const struct host_profile *a, const struct host_profile *b,
			     char *buf, size_t len)
{
	struct diff_acc d = { .buf = buf, .len = len };
	bool swap_a = a->swap_total_bytes != 0, swap_b = b->swap_total_bytes != 0;

	if (len)
		buf[0] = '\0';
	if (a->kernel_major != b->kernel_major || a->kernel_minor != b->kernel_minor)
		diff_add(&d, "kernel: %u.%u vs %u.%u", a->kernel_major, a->kernel_minor,
			 b->kernel_major, b->kernel_minor);
	DIFF_ULONG(page_size);
	DIFF_BOOL(zero_page);
	DIFF_BOOL(huge_zero_page);
	DIFF_BOOL(pkeys);
	DIFF_BOOL(anon_vma_name);
	DIFF_ULONG(fault_around_bytes);
	if (file_folio_kb(a) != file_folio_kb(b))
		diff_add(&d, "file_folio_max_kb: %u vs %u", file_folio_kb(a), file_folio_kb(b));
	DIFF_STR(thp_enabled);
	DIFF_STR(thp_shmem_enabled);
	for (unsigned int i = 0; i < a->nr_mthp; i++) {
		const struct host_mthp *ma = &a->mthp[i], *mb = find_mthp(b, ma->kb);

		if (!mb || strcmp(ma->enabled, mb->enabled) ||
		    strcmp(ma->shmem_enabled, mb->shmem_enabled))
			diff_add(&d, "hugepages-%ukB: %s/%s vs %s/%s", ma->kb,
				 *ma->enabled ? ma->enabled : "-",
				 *ma->shmem_enabled ? ma->shmem_enabled : "-",
				 mb && *mb->enabled ? mb->enabled : "-",
				 mb && *mb->shmem_enabled ? mb->shmem_enabled : "-");
	}
	for (unsigned int i = 0; i < b->nr_mthp; i++)
		if (!find_mthp(a, b->mthp[i].kb))
			diff_add(&d, "hugepages-%ukB: absent vs present", b->mthp[i].kb);
	if (swap_a != swap_b)
		diff_add(&d, "swap: %s vs %s", swap_a ? "yes" : "no", swap_b ? "yes" : "no");
	DIFF_ULONG(numa_nodes);
	DIFF_ULONG(max_map_count);
	DIFF_ULONG(overcommit_memory);
	DIFF_ULONG(stack_rlimit);
	return d.n;
}

int host_profile_unmodelled(const struct host_profile *p, char *buf, size_t len)
{
	struct diff_acc d = { .buf = buf, .len = len };

	if (len)
		buf[0] = '\0';
	if (p->page_size != 4096)
		diff_add(&d, "page size %lu (the model has 4096)", p->page_size);
	/*
	 * THP of every size is modelled, anonymous (vml_sys_config.thp_anon)
	 * and shmem (shmem_huge, shmem_mthp); the sizes must be folio orders.
	 */
	for (unsigned int i = 0; i < p->nr_mthp; i++) {
		int order = mthp_order(p, p->mthp[i].kb);

		if (order < 1 || order >= VML_THP_ORDERS)
			diff_add(&d, "THP size %u kB (the model's folios are 4 KiB to 2 MiB)",
				 p->mthp[i].kb);
	}
	if (p->overcommit_memory == 2)
		diff_add(&d, "vm.overcommit_memory=2 (the model cannot know the system's "
			 "commitments)");
	return d.n;
}

static const char *yesno(bool b)
{
	return b ? "yes" : "no";
}

static const char *view_lock_text(enum host_view_lock l)
{
	return l == HOST_VIEW_LOCK_MMAP ? "mmap_lock" :
	       l == HOST_VIEW_LOCK_VMA ? "per-VMA locks" : "unknown (counted as mmap_lock)";
}

void host_profile_print(const struct host_profile *p, FILE *f)
{
	char buf[512];

	fprintf(f, "# host profile (%s%s%s)\n", p->source, *p->date ? ", " : "", p->date);
	fprintf(f, "%-22s %s\n", "hostname", p->hostname);
	fprintf(f, "%-22s %s\n", "kernel", p->kernel_release);
	fprintf(f, "%-22s %lu\n", "page_size", p->page_size);
	fprintf(f, "%-22s %u\n", "cpus", p->cpus);
	fprintf(f, "%-22s %llu MiB\n", "ram", (unsigned long long)(p->ram_bytes >> 20));
	fprintf(f, "%-22s %s\n", "zero_page", yesno(p->zero_page));
	fprintf(f, "%-22s %s\n", "huge_zero_page", yesno(p->huge_zero_page));
	fprintf(f, "%-22s %s\n", "pkeys", yesno(p->pkeys));
	fprintf(f, "%-22s %s\n", "anon_vma_name", yesno(p->anon_vma_name));
	fprintf(f, "%-22s %lu\n", "fault_around_bytes", p->fault_around_bytes);
	if (p->readahead_kb)
		fprintf(f, "%-22s %lu\n", "readahead_kb", p->readahead_kb);
	else
		fprintf(f, "%-22s none found (a page-cache miss reads the page alone)\n",
			"readahead_kb");
	if (p->file_folio_max_kb)
		fprintf(f, "%-22s %u (%s)\n", "file_folio_max_kb", p->file_folio_max_kb,
			p->file_folio_probe);
	else
		fprintf(f, "%-22s unknown (%s): the model keeps 64\n", "file_folio_max_kb",
			p->file_folio_probe);
	fprintf(f, "%-22s %s\n", "thp_enabled", p->thp_enabled);
	fprintf(f, "%-22s %s\n", "thp_defrag", p->thp_defrag);
	fprintf(f, "%-22s %s\n", "thp_shmem_enabled", p->thp_shmem_enabled);
	for (unsigned int i = 0; i < p->nr_mthp; i++) {
		char key[32];

		snprintf(key, sizeof(key), "hugepages-%ukB", p->mthp[i].kb);
		fprintf(f, "%-22s %s / shmem %s\n", key, *p->mthp[i].enabled ? p->mthp[i].enabled : "-",
			*p->mthp[i].shmem_enabled ? p->mthp[i].shmem_enabled : "-");
	}
	fprintf(f, "%-22s defrag %u, max_ptes_none %u, max_ptes_swap %u, max_ptes_shared %u, "
		"pages_to_scan %u, scan_sleep %u ms, alloc_sleep %u ms\n", "khugepaged",
		p->khugepaged.defrag, p->khugepaged.max_ptes_none, p->khugepaged.max_ptes_swap,
		p->khugepaged.max_ptes_shared, p->khugepaged.pages_to_scan,
		p->khugepaged.scan_sleep_ms, p->khugepaged.alloc_sleep_ms);
	fprintf(f, "%-22s %u device(s), %llu MiB, %llu MiB free\n", "swap", p->nr_swap_devices,
		(unsigned long long)(p->swap_total_bytes >> 20),
		(unsigned long long)(p->swap_free_bytes >> 20));
	fprintf(f, "%-22s %u\n", "numa_nodes", p->numa_nodes);
	fprintf(f, "%-22s %lu\n", "max_map_count", p->max_map_count);
	fprintf(f, "%-22s %d (ratio %u, kbytes %llu)\n", "overcommit_memory",
		p->overcommit_memory, p->overcommit_ratio,
		(unsigned long long)p->overcommit_kbytes);
	if (p->stack_rlimit == UINT64_MAX)
		fprintf(f, "%-22s unlimited\n", "stack_rlimit");
	else
		fprintf(f, "%-22s %llu\n", "stack_rlimit", (unsigned long long)p->stack_rlimit);
	fprintf(f, "%-22s %u (%s)\n", "hz", p->hz, p->hz_source);
	fprintf(f, "%-22s %.3f ms\n", "mmap_lock_handoff", p->handoff_ns / 1e6);
	fprintf(f, "%-22s %s\n", "preempt", *p->preempt ? p->preempt : "unknown");
	if (p->nr_kdamonds)
		fprintf(f, "%-22s %u kdamond(s), ops %s, actions %s: DAMON moves sampled pages' "
			"Accessed bits into their folios' young flags, which smaps counts as "
			"Referenced and MADV_COLD/PAGEOUT do not clear (docs/host-profile.md)\n",
			"damon", p->nr_kdamonds, *p->damon_ops ? p->damon_ops : "?",
			*p->damon_actions ? p->damon_actions : "none");
	else
		fprintf(f, "%-22s none running\n", "damon");
	for (unsigned int v = 0; v < HOST_LOCK_VIEWS; v++) {
		char name[32];

		snprintf(name, sizeof(name), "%s_lock", host_view_lock_view_name(v));
		fprintf(f, "%-22s %s (%s)\n", name, view_lock_text(p->view_lock[v]),
			*p->view_lock_probe[v] ? p->view_lock_probe[v] : "not probed");
	}
	if (host_profile_unmodelled(p, buf, sizeof(buf)))
		fprintf(f, "%-22s %s\n", "not modelled", buf);
}

/* ---- JSON ---- */

int host_profile_save(const struct host_profile *p, const char *path)
{
	json_t *doc = json_object(), *mthp = json_array(), *kh = json_object();
	int ret;

	if (!doc || !mthp || !kh) {
		json_decref(doc);
		json_decref(mthp);
		json_decref(kh);
		return -ENOMEM;
	}
	json_set_str(doc, "hostname", p->hostname);
	json_set_str(doc, "date", p->date);
	json_set_str(doc, "kernel_release", p->kernel_release);
	json_set_u64(doc, "page_size", p->page_size);
	json_set_u64(doc, "cpus", p->cpus);
	json_set_u64(doc, "ram_bytes", p->ram_bytes);
	json_set_bool(doc, "zero_page", p->zero_page);
	json_set_bool(doc, "huge_zero_page", p->huge_zero_page);
	json_set_bool(doc, "pkeys", p->pkeys);
	json_set_bool(doc, "anon_vma_name", p->anon_vma_name);
	json_set_u64(doc, "fault_around_bytes", p->fault_around_bytes);
	json_set_u64(doc, "readahead_kb", p->readahead_kb);
	if (p->file_folio_max_kb)
		json_set_u64(doc, "file_folio_max_kb", p->file_folio_max_kb);
	else
		json_set_str(doc, "file_folio_max_kb", "unknown");
	json_set_str(doc, "file_folio_probe", p->file_folio_probe);
	json_set_str(doc, "thp_enabled", p->thp_enabled);
	json_set_str(doc, "thp_defrag", p->thp_defrag);
	json_set_str(doc, "thp_shmem_enabled", p->thp_shmem_enabled);
	for (unsigned int i = 0; i < p->nr_mthp; i++) {
		json_t *m = json_object();

		json_set_u64(m, "kb", p->mthp[i].kb);
		json_set_str(m, "enabled", p->mthp[i].enabled);
		json_set_str(m, "shmem_enabled", p->mthp[i].shmem_enabled);
		json_push_new(mthp, m);
	}
	json_set_new(doc, "mthp", mthp);
	json_set_u64(kh, "defrag", p->khugepaged.defrag);
	json_set_u64(kh, "max_ptes_none", p->khugepaged.max_ptes_none);
	json_set_u64(kh, "max_ptes_swap", p->khugepaged.max_ptes_swap);
	json_set_u64(kh, "max_ptes_shared", p->khugepaged.max_ptes_shared);
	json_set_u64(kh, "pages_to_scan", p->khugepaged.pages_to_scan);
	json_set_u64(kh, "scan_sleep_millisecs", p->khugepaged.scan_sleep_ms);
	json_set_u64(kh, "alloc_sleep_millisecs", p->khugepaged.alloc_sleep_ms);
	json_set_new(doc, "khugepaged", kh);
	json_set_u64(doc, "swap_total_bytes", p->swap_total_bytes);
	json_set_u64(doc, "swap_free_bytes", p->swap_free_bytes);
	json_set_u64(doc, "swap_devices", p->nr_swap_devices);
	json_set_u64(doc, "numa_nodes", p->numa_nodes);
	json_set_u64(doc, "max_map_count", p->max_map_count);
	json_set_i64(doc, "overcommit_memory", p->overcommit_memory);
	json_set_u64(doc, "overcommit_ratio", p->overcommit_ratio);
	json_set_u64(doc, "overcommit_kbytes", p->overcommit_kbytes);
	if (p->stack_rlimit == UINT64_MAX)
		json_set_str(doc, "stack_rlimit", "unlimited");
	else
		json_set_u64(doc, "stack_rlimit", p->stack_rlimit);
	json_set_u64(doc, "hz", p->hz);
	json_set_str(doc, "hz_source", p->hz_source);
	json_set_u64(doc, "mmap_lock_handoff_ns", p->handoff_ns);
	json_set_str(doc, "preempt", p->preempt);
	json_set_u64(doc, "kdamonds", p->nr_kdamonds);
	json_set_str(doc, "damon_ops", p->damon_ops);
	json_set_str(doc, "damon_actions", p->damon_actions);
	for (unsigned int v = 0; v < HOST_LOCK_VIEWS; v++) {
		char key[40];

		snprintf(key, sizeof(key), "%s_lock", host_view_lock_view_name(v));
		json_set_str(doc, key, host_view_lock_name(p->view_lock[v]));
		snprintf(key, sizeof(key), "%s_lock_probe", host_view_lock_view_name(v));
		json_set_str(doc, key, p->view_lock_probe[v]);
	}
	ret = json_write_file(doc, path);
	json_decref(doc);
	return ret;
}

/*
 * Every field is required: a profile that lacks one was written by another
 * version and would silently configure the model wrongly.
 */
struct loader {
	const json_t *obj;
	const char *path;
	char *err;
	size_t errlen;
	int ret;
};

static void bad_field(struct loader *l, const char *key, int ret)
{
	if (l->ret)
		return;
	l->ret = -EINVAL;
	snprintf(l->err, l->errlen, "%s: \"%s\" is %s", l->path, key,
		 ret == -ENOENT ? "missing" : "of the wrong type");
}

static void get_str(struct loader *l, const char *key, char *out, size_t len)
{
	const char *s;
	int ret = json_get_str(l->obj, key, &s);

	if (ret)
		bad_field(l, key, ret);
	else
		snprintf(out, len, "%s", s);
}

static uint64_t get_u64(struct loader *l, const char *key)
{
	uint64_t v = 0;
	int ret = json_get_u64(l->obj, key, &v);

	if (ret)
		bad_field(l, key, ret);
	return v;
}

static bool get_bool(struct loader *l, const char *key)
{
	bool v = false;
	int ret = json_get_bool(l->obj, key, &v);

	if (ret)
		bad_field(l, key, ret);
	return v;
}

/* The per-size mTHP settings: one object per hugepages-NkB directory. */
static void load_mthp(struct loader *l, const json_t *mthp, struct host_profile *p)
{
	size_t i;
	json_t *m;

	if (!json_is_array(mthp)) {
		bad_field(l, "mthp", mthp ? -EINVAL : -ENOENT);
		return;
	}
	json_array_foreach(mthp, i, m) {
		struct loader ml = { .obj = m, .path = l->path, .err = l->err, .errlen = l->errlen };
		struct host_mthp *hm;

		if (p->nr_mthp == HOST_MAX_MTHP)
			break;
		hm = &p->mthp[p->nr_mthp];
		hm->kb = (unsigned int)get_u64(&ml, "kb");
		get_str(&ml, "enabled", hm->enabled, sizeof(hm->enabled));
		get_str(&ml, "shmem_enabled", hm->shmem_enabled, sizeof(hm->shmem_enabled));
		if (ml.ret && !l->ret)
			l->ret = ml.ret;
		p->nr_mthp++;
	}
}

static void load_khugepaged(struct loader *l, const json_t *kh, struct host_profile *p)
{
	struct loader kl = { .obj = kh, .path = l->path, .err = l->err, .errlen = l->errlen };

	if (!json_is_object(kh)) {
		bad_field(l, "khugepaged", kh ? -EINVAL : -ENOENT);
		return;
	}
	p->khugepaged.defrag = (unsigned int)get_u64(&kl, "defrag");
	p->khugepaged.max_ptes_none = (unsigned int)get_u64(&kl, "max_ptes_none");
	p->khugepaged.max_ptes_swap = (unsigned int)get_u64(&kl, "max_ptes_swap");
	p->khugepaged.max_ptes_shared = (unsigned int)get_u64(&kl, "max_ptes_shared");
	p->khugepaged.pages_to_scan = (unsigned int)get_u64(&kl, "pages_to_scan");
	p->khugepaged.scan_sleep_ms = (unsigned int)get_u64(&kl, "scan_sleep_millisecs");
	p->khugepaged.alloc_sleep_ms = (unsigned int)get_u64(&kl, "alloc_sleep_millisecs");
	if (kl.ret && !l->ret)
		l->ret = kl.ret;
}

/* The fields whose JSON form is not a plain string, number or boolean. */
static void load_special(struct loader *l, struct host_profile *p)
{
	int64_t oc = 0;
	const char *s;
	int ret;

	ret = json_get_i64(l->obj, "overcommit_memory", &oc);
	if (ret || oc < 0 || oc > 2)
		bad_field(l, "overcommit_memory", ret ? ret : -EINVAL);
	p->overcommit_memory = (int)oc;
	if (!json_get_str(l->obj, "stack_rlimit", &s) && !strcmp(s, "unlimited"))
		p->stack_rlimit = UINT64_MAX;
	else
		p->stack_rlimit = get_u64(l, "stack_rlimit");
	if (!json_get_str(l->obj, "file_folio_max_kb", &s) && !strcmp(s, "unknown"))
		p->file_folio_max_kb = 0;
	else
		p->file_folio_max_kb = (unsigned int)get_u64(l, "file_folio_max_kb");
}

/*
 * The view locks: absent in a profile saved before they were probed (then
 * unknown, which counts as mmap_lock, as every release then did).
 */
static void load_view_locks(struct loader *l, struct host_profile *p)
{
	for (unsigned int v = 0; v < HOST_LOCK_VIEWS; v++) {
		const char *s;
		char key[40];

		snprintf(key, sizeof(key), "%s_lock", host_view_lock_view_name(v));
		if (json_get_str(l->obj, key, &s)) {
			snprintf(p->view_lock_probe[v], sizeof(p->view_lock_probe[v]),
				 "not in the profile");
			continue;
		}
		if (!strcmp(s, "mmap"))
			p->view_lock[v] = HOST_VIEW_LOCK_MMAP;
		else if (!strcmp(s, "vma"))
			p->view_lock[v] = HOST_VIEW_LOCK_VMA;
		else if (strcmp(s, "unknown"))
			bad_field(l, key, -EINVAL);
		snprintf(key, sizeof(key), "%s_lock_probe", host_view_lock_view_name(v));
		if (!json_get_str(l->obj, key, &s))
			snprintf(p->view_lock_probe[v], sizeof(p->view_lock_probe[v]), "%s", s);
	}
}

/* Values the model cannot be configured with, though well-formed JSON. */
static void check_loaded(struct loader *l, const struct host_profile *p)
{
	if (!l->ret && (p->page_size != 4096 && p->page_size != 16384 && p->page_size != 65536))
		bad_field(l, "page_size", -EINVAL);
	if (!l->ret && (p->fault_around_bytes < p->page_size ||
			(p->fault_around_bytes & (p->fault_around_bytes - 1)) ||
			p->fault_around_bytes > 512 * p->page_size))
		bad_field(l, "fault_around_bytes", -EINVAL);
	/* in kB: 0 (unknown) or a power-of-two number of pages up to 2 MiB */
	if (!l->ret && p->file_folio_max_kb &&
	    (mthp_order(p, p->file_folio_max_kb) < 0 || p->file_folio_max_kb > 2048))
		bad_field(l, "file_folio_max_kb", -EINVAL);
	if (!l->ret && (!p->numa_nodes || p->numa_nodes > 64))
		bad_field(l, "numa_nodes", -EINVAL);
	if (!l->ret && strcmp(p->thp_enabled, "always") && strcmp(p->thp_enabled, "madvise") &&
	    strcmp(p->thp_enabled, "never"))
		bad_field(l, "thp_enabled", -EINVAL);
}

int host_profile_load(const char *path, struct host_profile *p, char *err, size_t errlen)
{
	struct loader l = { .path = path, .err = err, .errlen = errlen };
	uint64_t ra = 0;
	json_t *doc;
	int ret;

	ret = json_read_file(path, &doc, err, errlen);
	if (ret)
		return ret;
	memset(p, 0, sizeof(*p));
	snprintf(p->source, sizeof(p->source), "%s", path);
	l.obj = doc;
	if (!json_is_object(doc)) {
		snprintf(err, errlen, "%s: not a JSON object", path);
		json_decref(doc);
		return -EINVAL;
	}
	get_str(&l, "hostname", p->hostname, sizeof(p->hostname));
	get_str(&l, "date", p->date, sizeof(p->date));
	get_str(&l, "kernel_release", p->kernel_release, sizeof(p->kernel_release));
	sscanf(p->kernel_release, "%u.%u", &p->kernel_major, &p->kernel_minor);
	p->page_size = get_u64(&l, "page_size");
	p->cpus = (unsigned int)get_u64(&l, "cpus");
	p->ram_bytes = get_u64(&l, "ram_bytes");
	p->zero_page = get_bool(&l, "zero_page");
	p->huge_zero_page = get_bool(&l, "huge_zero_page");
	p->pkeys = get_bool(&l, "pkeys");
	p->anon_vma_name = get_bool(&l, "anon_vma_name");
	p->fault_around_bytes = get_u64(&l, "fault_around_bytes");
	/* absent in a profile saved before it was measured: no read-around, as then */
	if (json_get_u64(l.obj, "readahead_kb", &ra) == 0)
		p->readahead_kb = ra;
	get_str(&l, "file_folio_probe", p->file_folio_probe, sizeof(p->file_folio_probe));
	get_str(&l, "thp_enabled", p->thp_enabled, sizeof(p->thp_enabled));
	get_str(&l, "thp_defrag", p->thp_defrag, sizeof(p->thp_defrag));
	get_str(&l, "thp_shmem_enabled", p->thp_shmem_enabled, sizeof(p->thp_shmem_enabled));
	load_mthp(&l, json_object_get(doc, "mthp"), p);
	load_khugepaged(&l, json_object_get(doc, "khugepaged"), p);
	p->swap_total_bytes = get_u64(&l, "swap_total_bytes");
	p->swap_free_bytes = get_u64(&l, "swap_free_bytes");
	p->nr_swap_devices = (unsigned int)get_u64(&l, "swap_devices");
	p->numa_nodes = (unsigned int)get_u64(&l, "numa_nodes");
	p->max_map_count = get_u64(&l, "max_map_count");
	load_special(&l, p);
	p->overcommit_ratio = (unsigned int)get_u64(&l, "overcommit_ratio");
	p->overcommit_kbytes = get_u64(&l, "overcommit_kbytes");
	p->hz = (unsigned int)get_u64(&l, "hz");
	get_str(&l, "hz_source", p->hz_source, sizeof(p->hz_source));
	p->handoff_ns = get_u64(&l, "mmap_lock_handoff_ns");
	get_str(&l, "preempt", p->preempt, sizeof(p->preempt));
	p->nr_kdamonds = (unsigned int)get_u64(&l, "kdamonds");
	get_str(&l, "damon_ops", p->damon_ops, sizeof(p->damon_ops));
	get_str(&l, "damon_actions", p->damon_actions, sizeof(p->damon_actions));
	load_view_locks(&l, p);
	check_loaded(&l, p);
	json_decref(doc);
	return l.ret;
}

/* ---- the process's current profile ---- */

/* Set once, by the first caller; read-only afterwards (so readers need no lock). */
static struct host_profile current;
static bool current_set;		/* [current_lock] */
static pthread_mutex_t current_lock = PTHREAD_MUTEX_INITIALIZER;

int host_profile_use_file(const char *path, char *err, size_t errlen)
{
	struct host_profile p;
	int ret = host_profile_load(path, &p, err, errlen);

	if (ret)
		return ret;
	pthread_mutex_lock(&current_lock);
	if (current_set) {
		ret = -EBUSY;	/* a model already runs on the other profile */
	} else {
		current = p;
		current_set = true;
	}
	pthread_mutex_unlock(&current_lock);
	return ret;
}

int host_profile_current(const struct host_profile **out)
{
	int ret = 0;

	pthread_mutex_lock(&current_lock);
	if (!current_set) {
		ret = host_probe(&current, NULL);
		current_set = !ret;
	}
	pthread_mutex_unlock(&current_lock);
	if (!ret)
		*out = &current;
	return ret;
}

/* This host's view locks, probed on the first question (host_view_per_vma). */
static struct host_profile probed_locks;	/* [current_lock]: only the view_lock fields */
static bool probed_locks_done;			/* [current_lock] */

bool host_view_per_vma(int view, const char **how)
{
	static __thread char buf[400];
	const struct host_profile *cur;
	enum host_view_lock l;
	int i = view == VML_VIEW_SMAPS ? HOST_LOCK_SMAPS :
		view == VML_VIEW_NUMA_MAPS ? HOST_LOCK_NUMA_MAPS :
		view == VML_VIEW_SMAPS_ROLLUP ? HOST_LOCK_SMAPS_ROLLUP : -1;
	bool per_vma;

	if (host_profile_current(&cur)) {
		if (how)
			*how = "unknown: no host profile";
		return i < 0;
	}
	if (i < 0) {
		/* maps 6.17+, PROCMAP_QUERY 6.18 (6.17's ran under mmap_lock: rarely asked) */
		per_vma = cur->kernel_major > 6 || (cur->kernel_major == 6 && cur->kernel_minor >= 17);
		snprintf(buf, sizeof(buf), "release %u.%u", cur->kernel_major, cur->kernel_minor);
	} else if (strcmp(cur->source, "probed")) {
		l = cur->view_lock[i];
		per_vma = l == HOST_VIEW_LOCK_VMA;
		snprintf(buf, sizeof(buf), "profile %s%s", cur->source,
			 l == HOST_VIEW_LOCK_UNKNOWN ? ": unknown, counted as mmap_lock" : "");
	} else {
		pthread_mutex_lock(&current_lock);
		if (!probed_locks_done) {
			int ret = host_probe_view_locks(&probed_locks);

			if (ret)
				for (unsigned int v = 0; v < HOST_LOCK_VIEWS; v++)
					snprintf(probed_locks.view_lock_probe[v],
						 sizeof(probed_locks.view_lock_probe[v]),
						 "the probe failed: %s", strerror(-ret));
			probed_locks_done = true;
		}
		l = probed_locks.view_lock[i];
		snprintf(buf, sizeof(buf), "probed%s%s", l == HOST_VIEW_LOCK_UNKNOWN ?
			 ", unknown, counted as mmap_lock: " : "",
			 l == HOST_VIEW_LOCK_UNKNOWN ? probed_locks.view_lock_probe[i] : "");
		pthread_mutex_unlock(&current_lock);
		per_vma = l == HOST_VIEW_LOCK_VMA;
	}
	if (how)
		*how = buf;
	return per_vma;
}

static struct host_model_switches switches;	/* [current_lock] */

void host_set_i_mmap_order(enum vml_i_mmap_order order)
{
	pthread_mutex_lock(&current_lock);
	switches.i_mmap_order = order;
	switches.i_mmap_order_set = true;
	pthread_mutex_unlock(&current_lock);
}

void host_set_shmem_swap_usage(enum vml_shmem_swap_usage usage)
{
	pthread_mutex_lock(&current_lock);
	switches.shmem_swap_usage = usage;
	switches.shmem_swap_usage_set = true;
	pthread_mutex_unlock(&current_lock);
}

void host_set_rollup(enum vml_rollup_mode mode, bool check)
{
	pthread_mutex_lock(&current_lock);
	switches.rollup = check ? VML_ROLLUP_INCREMENTAL : mode;
	switches.rollup_check = check;
	pthread_mutex_unlock(&current_lock);
}

struct host_model_switches host_model_switches(void)
{
	struct host_model_switches s;

	pthread_mutex_lock(&current_lock);
	s = switches;
	pthread_mutex_unlock(&current_lock);
	return s;
}

int host_current_config(uint64_t extra_swap_bytes, struct vml_sys_config *cfg)
{
	return host_current_config_knobs(extra_swap_bytes, NULL, 0, cfg, NULL, 0);
}

int host_profile_set_knob(struct host_profile *p, const char *name, const char *value)
{
	enum script_knob_file file;
	struct host_mthp *m = NULL;
	unsigned int kb;

	if (script_knob_file(name, &file, &kb))
		return -EINVAL;
	for (unsigned int i = 0; kb && i < p->nr_mthp; i++)
		if (p->mthp[i].kb == kb)
			m = &p->mthp[i];
	switch (file) {
	case KNOB_THP:
		snprintf(p->thp_enabled, sizeof(p->thp_enabled), "%s", value);
		return 0;
	case KNOB_THP_DEFRAG:
		snprintf(p->thp_defrag, sizeof(p->thp_defrag), "%s", value);
		return 0;
	case KNOB_THP_SHMEM:
		snprintf(p->thp_shmem_enabled, sizeof(p->thp_shmem_enabled), "%s", value);
		return 0;
	case KNOB_MTHP:
		/* A size with no anonymous file (8 kB: shmem only) has no such knob. */
		if (!m || !*m->enabled)
			return -ENOENT;
		snprintf(m->enabled, sizeof(m->enabled), "%s", value);
		return 0;
	case KNOB_MTHP_SHMEM:
		if (!m || !*m->shmem_enabled)
			return -ENOENT;
		snprintf(m->shmem_enabled, sizeof(m->shmem_enabled), "%s", value);
		return 0;
	}
	return -EINVAL;
}

int host_current_config_knobs(uint64_t extra_swap_bytes, const struct script_knob *knobs,
			      size_t nr, struct vml_sys_config *cfg, char *err, size_t errlen)
{
	struct host_model_switches s = host_model_switches();
	const struct host_profile *cur;
	struct host_profile p;
	int ret = host_profile_current(&cur);

	if (ret)
		return ret;
	p = *cur;
	for (size_t i = 0; i < nr; i++) {
		ret = host_profile_set_knob(&p, knobs[i].name, knobs[i].value);
		if (ret) {
			snprintf(err, errlen, "%s has no THP knob %s", strcmp(p.source, "probed") ?
				 p.source : "this host", knobs[i].name);
			return ret;
		}
	}
	host_profile_to_config(&p, extra_swap_bytes, cfg);
	if (s.i_mmap_order_set)
		cfg->i_mmap_order = s.i_mmap_order;
	if (s.shmem_swap_usage_set)
		cfg->shmem_swap_usage = s.shmem_swap_usage;
	cfg->rollup = s.rollup;
	return 0;
}
