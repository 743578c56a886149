// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * mapper.c - Paul McKenney's mapper (mapper.c in his proc-mmap_sem-test):
 * on the model, the same calls in the same order as the live child's
 * mapper_run() (src/spaces/child_main.c), so that a model row and a live row
 * of one seed replay the same sequence; and the live child started for it.
 * Shared by proc-vs-map and monitor.
 */
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#include "internal.h"
#include "layout.h"
#include "sync/rcu.h"
#include "sync/trace_emit.h"
#include "util/clock.h"
#include "util/rand.h"
#include "vmalock/mm.h"

#define MAPPER_PAGE 4096UL

void *bench_model_mapper_main(void *arg)
{
	struct bench_mapper *m = arg;
	unsigned long pages = m->mb * (1024 * 1024 / MAPPER_PAGE);
	struct vml_rand rnd = vml_rand_init(m->seed, 0);
	uint64_t end;

	bench_pin_thread(m->cpu);
	m->tid = vml_gettid();
	/*
	 * The VMAs and tree nodes it frees go to a worker on its own CPU below
	 * it, as the kernel frees them in softirq on the CPU that queued them
	 * (sync/rcu.h); liburcu's own worker, at nice 0 on any CPU, could
	 * preempt a nice-15 reader that holds a lock.
	 */
	if (!m->rcu_anywhere && m->cpu >= 0)
		vml_rcu_thread_callbacks(m->cpu, 19);
	end = plat_now_ns() + (uint64_t)(m->duration_s * NSEC_PER_SEC);
	do {	/* at least one call, however late we are scheduled */
		uint64_t x = vml_rand_next(&rnd), t0, t1;
		unsigned long a = m->region + (x & (pages - 1)) * MAPPER_PAGE;
		int ret;

		t0 = plat_now_ns();
		if (x & (1ULL << 40))
			ret = vml_mmap(m->mm, a, MAPPER_PAGE, PROT_READ | PROT_WRITE,
				       MAP_FIXED | MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE,
				       NULL, 0, NULL);
		else
			ret = vml_munmap(m->mm, a, MAPPER_PAGE);
		t1 = plat_now_ns();
		if (ret)
			m->fails++;
		lat_hist_record(m->hist, t1 - t0);
		plat_sleep_ns(BENCH_MAPPER_SLEEP_NS);
	} while (plat_now_ns() < end);
	return NULL;
}

int bench_live_mapper_start(unsigned long mb, uint64_t seed, int cpu,
			    const struct bench_layout *layout, unsigned long *layout_vmas,
			    struct child_lat_rep *rep, struct target **out)
{
	struct target *t;
	/*
	 * Files of its own, as its address space is: the last sample's writes
	 * through shared mappings, truncations and holes do not carry over.
	 */
	int ret = target_create(TARGET_LIVE, NULL, &t);

	if (ret) {
		fprintf(stderr, "vmalock bench: live: starting vmalock-child: %s\n", strerror(-ret));
		return ret;
	}
	bench_pin_pid(target_pid(t), cpu);
	/* the layout first, as on the model; it prints its own failure */
	ret = layout ? bench_layout_apply(layout, t, layout_vmas) : 0;
	if (ret) {
		target_destroy(t);
		return ret;
	}
	ret = target_live_mapper_setup(t, layout ? layout->region : 0, mb << 20, seed, rep);
	if (ret) {
		fprintf(stderr, "vmalock bench: live: mapping the %lu MiB region: %s\n", mb,
			strerror(-ret));
		target_destroy(t);
		return ret;
	}
	*out = t;
	return 0;
}
