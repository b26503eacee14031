// SPDX-License-Identifier: MIT
/*
 * bench/gpu-dma-bench - what the software NIC's copies into and out of GPU memory cost
 * while a kernel runs beside them. The copies are made as tests/lib/gpu_dma.c makes
 * them for the software NIC (GPUDirect RDMA on the sim): dvx_hal_gpu_memcpy_async() on
 * a non-blocking stream of their own, then the stream waited for; 50 round trips of
 * 64 B to 24 KiB (device -> host, host -> device) per sample, 10 samples a row, host
 * buffers pageable (as the sim's MR memory is) and registered. The reference, in the
 * same run, is the same copies with no kernel. The kernels (bench/gpu-dma-bench.cu)
 * spin for up to 1 s on the GPU's clock; in the polling rows some of their threads read
 * a word of host memory the GPU maps instead, as device waits on counters, signals or
 * CQs in host memory do.
 *
 * The second table asks what holds the NIC's copies up while a kernel waits for them:
 * a kernel (d_wait) spins on a word of device memory that the NIC's copy sets, as a
 * collective's kernel waits on the software NIC with GPU buffers; while it spins, a
 * second thread of the application makes one driver call (a launch, a module load, the
 * first launch of a module loaded before, an unload, an allocation and its free, a host
 * registration or its undoing, a stream), and 2 ms after that thread starts the NIC
 * copies the word (the calls that hold it take far longer than 2 ms: "the call took").
 * A call that waits for the running kernel and holds the NIC's copy up meanwhile is a
 * deadlock, broken only by the kernel's own bound (2 s): the row says "gave up".
 * Every call is tried three times: the NIC's copy made in this process (as the software
 * NIC makes it), then by a process of its own that maps the word by a legacy IPC handle,
 * then by dvx-copier (plugins/nccl/copier.h: the NCCL plugin's engine for GPU buffers,
 * spawned after CUDA started here, through its staging area; found beside this program,
 * at ../plugins/nccl/dvx-copier from it, or at $DVX_NET_GDR_COPIER).
 * (On an H200 with driver 580 a module load and a host unregister do, under any
 * CUDA_MODULE_LOADING, and under compute-sanitizer a plain launch too: bench/RESULTS.md.)
 *
 * Prints two tables ("gpu-dma-bench calls": the second only); exits 77 without a GPU.
 *
 * "gpu-dma-bench fork-probe" checks a test set-up instead: a forked child (no exec, as
 * the GPU tests' process worlds fork) launches d_wait with its result pointer 1 MiB
 * past the end of a 4 KiB allocation, a write out of bounds, and ends with _exit() as
 * those children do, then a second child the same with exit(). Under compute-sanitizer
 * memcheck (--target-processes all) a report of the write says the children are
 * checked; no report says a clean run of such a world checked nothing in them.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench_io.h"
#include "copier.h"
#include <dvx/gpu/gpu.h>
#include <dvx/hal/gpu.h>

extern const unsigned char dvx_fatbin_bench_gpu_dma_bench[];
extern const size_t dvx_fatbin_bench_gpu_dma_bench_len;

#define SEC 1000000000ull
#define BYTES 65536u
#define SAMPLES 10
#define TRIPS 50

static struct dvx_gpu g;
static struct dvx_gpu_module mod_bench;
static void *k_spin;

static void die(int err, const char *what)
{
	if (err) {
		fprintf(stderr, "gpu-dma-bench: %s: %d (%s: %s)\n", what, err, g.hg.diag.op,
			g.hg.diag.msg);
		exit(1);
	}
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * SEC + (uint64_t)ts.tv_nsec;
}

/* one sample: TRIPS round trips, the mean time of one copy in us */
static double sample(struct dvx_gpu_stream *cs, uint64_t dev, void *host)
{
	uint64_t t0 = now_ns();
	int k;

	for (k = 0; k < TRIPS; k++) {
		uint64_t n = (uint64_t)(k % 7) * 4096 + 64;

		die(dvx_hal_gpu_memcpy_async(&g.hg, (uint64_t)(uintptr_t)host, dev, n, cs->handle),
		    "copy out");
		die(dvx_gpu_stream_wait(cs, 30 * SEC), "copy out, wait");
		die(dvx_hal_gpu_memcpy_async(&g.hg, dev, (uint64_t)(uintptr_t)host, n, cs->handle),
		    "copy in");
		die(dvx_gpu_stream_wait(cs, 30 * SEC), "copy in, wait");
	}
	return (double)(now_ns() - t0) / 1e3 / (2 * TRIPS);
}

enum act_kind {
	A_NONE, A_LAUNCH, A_LOAD, A_LOAD_ONLY, A_FIRST_LAUNCH, A_UNLOAD, A_ALLOC, A_HOSTREG,
	A_REG_ONLY, A_UNREG_ONLY, A_STREAM
};

/* one driver call of the application's other thread, timed; @m, @f, @hr: what the
 * main thread made before (or unmakes after) for the calls that take half a pair */
struct act {
	enum act_kind what;
	uint64_t flag_dptr;
	uint64_t ns;
	int err;
	struct dvx_gpu_module m;
	void *f;
	struct dvx_gpu_hostreg hr;
};

static uint8_t reg_buf[65536] __attribute__((aligned(4096)));

/* before the kernel: the first half of a pair the other thread finishes */
static void act_before(struct act *a)
{
	if (a->what == A_FIRST_LAUNCH || a->what == A_UNLOAD) {
		die(dvx_gpu_module_load(&g, dvx_fatbin_bench_gpu_dma_bench,
					dvx_fatbin_bench_gpu_dma_bench_len, &a->m), "module");
		die(dvx_gpu_module_function(&a->m, "d_spin", &a->f), "function");
	}
	if (a->what == A_UNREG_ONLY)
		die(dvx_gpu_host_register(&g, reg_buf, sizeof(reg_buf), 0, &a->hr), "register");
}

/* after the kernel: what the other thread's half left */
static void act_after(struct act *a)
{
	if (a->what == A_LOAD_ONLY || a->what == A_FIRST_LAUNCH)
		die(dvx_gpu_module_unload(&a->m), "unload");
	if (a->what == A_REG_ONLY)
		die(dvx_gpu_host_unregister(&a->hr), "unregister");
}

/* @f launched once, one thread, on a stream of its own, and waited for */
static int launch_once(void *f, void **args)
{
	struct dvx_gpu_stream s;
	int err = dvx_gpu_stream_create(&g, &s);

	if (!err) {
		err = dvx_gpu_launch(&g, f, 1, 1, 0, &s, args);
		if (!err)
			err = dvx_gpu_stream_wait(&s, 30 * SEC);
		dvx_gpu_stream_destroy(&s);
	}
	return err;
}

static void *act_main(void *p)
{
	struct act *a = p;
	uint64_t t0 = now_ns(), zero = 0;
	uint32_t none = 2;
	void *args[] = { &a->flag_dptr, &zero, &none };
	struct dvx_gpu_stream s;
	struct dvx_gpu_module m;
	struct dvx_gpu_mem mem;
	struct dvx_gpu_hostreg hr;
	void *f;
	int err = dvx_gpu_make_current(&g);

	switch (err ? A_NONE : a->what) {
	case A_NONE:
		break;
	case A_LAUNCH:	/* a kernel loaded long ago */
		err = launch_once(k_spin, args);
		break;
	case A_LOAD:	/* a module loaded now, its kernel launched for the first time */
		err = dvx_gpu_module_load(&g, dvx_fatbin_bench_gpu_dma_bench,
					  dvx_fatbin_bench_gpu_dma_bench_len, &m);
		if (!err) {
			err = dvx_gpu_module_function(&m, "d_spin", &f);
			if (!err)
				err = launch_once(f, args);
			dvx_gpu_module_unload(&m);
		}
		break;
	case A_LOAD_ONLY:
		err = dvx_gpu_module_load(&g, dvx_fatbin_bench_gpu_dma_bench,
					  dvx_fatbin_bench_gpu_dma_bench_len, &a->m);
		break;
	case A_FIRST_LAUNCH:	/* loaded before the kernel, launched now for the first time */
		err = launch_once(a->f, args);
		break;
	case A_UNLOAD:
		err = dvx_gpu_module_unload(&a->m);
		break;
	case A_REG_ONLY:
		err = dvx_gpu_host_register(&g, reg_buf, sizeof(reg_buf), 0, &a->hr);
		break;
	case A_UNREG_ONLY:
		err = dvx_gpu_host_unregister(&a->hr);
		break;
	case A_ALLOC:
		err = dvx_gpu_mem_alloc(&g, 1 << 20, 0, &mem);
		if (!err)
			err = dvx_gpu_mem_free(&mem);
		break;
	case A_HOSTREG:
		err = dvx_gpu_host_register(&g, reg_buf, sizeof(reg_buf), 0, &hr);
		if (!err)
			err = dvx_gpu_host_unregister(&hr);
		break;
	case A_STREAM:
		err = dvx_gpu_stream_create(&g, &s);
		if (!err)
			err = dvx_gpu_stream_destroy(&s);
		break;
	}
	a->ns = now_ns() - t0;
	a->err = err;
	return NULL;
}

static void pause_ns(uint64_t ns)
{
	uint64_t t = now_ns();

	while (now_ns() - t < ns)
		;
}

/*
 * The NIC's copies from a process of their own: forked before this one starts CUDA, it
 * opens the GPU, maps the word by a legacy IPC handle and, per byte 'c' on its pipe,
 * copies 1 into it on a stream of its own, waited for, and answers the result.
 */
static int nic_to[2] = { -1, -1 }, nic_from[2] = { -1, -1 };
static pid_t nic_pid = -1;

static int nic_main(void)
{
	static struct dvx_gpu cg;
	struct dvx_hal_gpu_handle h;
	struct dvx_gpu_stream st;
	struct dvx_gpu_mem m;
	uint32_t one = 1;
	int err;
	char c;

	if (bench_full_io(nic_to[0], &h, sizeof(h), 0))
		return 0;	/* no GPU in the parent: nothing to do */
	err = dvx_gpu_open(&cg, dvx_hal_cuda(), 0, NULL);
	if (!err)
		err = dvx_gpu_stream_create(&cg, &st);
	if (!err)
		err = dvx_gpu_mem_import(&cg, &h, &m);
	if (bench_full_io(nic_from[1], &err, sizeof(err), 1) || err)
		return 1;
	while (read(nic_to[0], &c, 1) == 1 && c == 'c') {
		err = dvx_hal_gpu_memcpy_async(&cg.hg, m.dptr, (uint64_t)(uintptr_t)&one,
					       sizeof(one), st.handle);
		if (!err)
			err = dvx_gpu_stream_wait(&st, 30 * SEC);
		if (bench_full_io(nic_from[1], &err, sizeof(err), 1))
			return 1;
	}
	dvx_gpu_mem_free(&m);
	dvx_gpu_stream_destroy(&st);
	dvx_gpu_close(&cg);
	return 0;
}

/* before CUDA starts here: the NIC's process, waiting for its handle */
static void nic_fork(void)
{
	if (pipe(nic_to) || pipe(nic_from))
		die(-errno, "pipes");
	nic_pid = fork();
	if (nic_pid < 0)
		die(-errno, "fork");
	if (nic_pid == 0) {
		close(nic_to[1]);
		close(nic_from[0]);
		_exit(nic_main());
	}
	close(nic_to[0]);
	close(nic_from[1]);
}

static void nic_end(void)
{
	if (nic_pid <= 0)
		return;
	(void)!write(nic_to[1], "q", 1);
	close(nic_to[1]);
	close(nic_from[0]);
	waitpid(nic_pid, NULL, 0);
	nic_pid = -1;
}

/* dvx-copier: $DVX_NET_GDR_COPIER, beside this program, or where the build puts it */
static int copier_up(struct dvxn_copier *c)
{
	char path[600];
	int rc = dvxn_copier_path(getenv("DVX_NET_GDR_COPIER"), path, sizeof(path));

	if (!rc)
		rc = dvxn_copier_start(c, path, 0, 65536, 30 * SEC);
	if (rc)
		printf("(no dvx-copier row: %s)\n", rc == -ENOENT && !c->why[0] ?
		       "dvx-copier not found" : c->why);
	return rc;
}

/* the second table: the NIC's copy a kernel waits for, beside one call of another thread */
static void copy_beside_calls(uint64_t flag_dptr)
{
	static const struct {
		const char *what;
		enum act_kind kind;
	} rows[] = {
		{ "nothing (the reference)", A_NONE },
		{ "launch of a loaded kernel", A_LAUNCH },
		{ "module load + first launch", A_LOAD },
		{ "module load only", A_LOAD_ONLY },
		{ "first launch (module loaded before)", A_FIRST_LAUNCH },
		{ "module unload", A_UNLOAD },
		{ "cuMemAlloc + cuMemFree, 1 MiB", A_ALLOC },
		{ "host register + unregister, 64 KiB", A_HOSTREG },
		{ "host register only", A_REG_ONLY },
		{ "host unregister only", A_UNREG_ONLY },
		{ "stream create + destroy", A_STREAM },
	};
	const char *lmode = getenv("CUDA_MODULE_LOADING");
	struct dvx_gpu_stream ks, cs;
	struct dvx_gpu_hostreg outr;
	struct dvx_gpu_mem word;
	uint64_t *out = aligned_alloc(4096, 4096);
	uint32_t *one = malloc(sizeof(*one)), r, proc, nproc = 2;
	struct dvxn_copier cop;
	struct dvxn_copier_map cmap;
	void *k_wait;

	if (!out || !one)
		die(-12, "host memory");
	*one = 1;
	memset(out, 0, 4096);
	die(dvx_gpu_module_function(&mod_bench, "d_wait", &k_wait), "function d_wait");
	die(dvx_gpu_stream_create(&g, &ks), "kernel stream");
	die(dvx_gpu_stream_create(&g, &cs), "copy stream");
	die(dvx_gpu_host_register(&g, out, 4096, 0, &outr), "register the result");
	die(dvx_gpu_mem_alloc(&g, 4096, DVX_GPU_MEM_LEGACY, &word), "device word");
	{
		struct dvx_hal_gpu_handle h;
		int err = -1;

		die(dvx_gpu_mem_export(&word, DVX_HAL_GPU_HANDLE_IPC, &h), "export the word");
		if (bench_full_io(nic_to[1], &h, sizeof(h), 1) ||
		    bench_full_io(nic_from[0], &err, sizeof(err), 0) || err)
			die(err ? err : -EPIPE, "the NIC's process");
	}
	memset(&cop, 0, sizeof(cop));
	if (!copier_up(&cop)) {
		struct dvxn_copier_mem cm;
		char why[256];

		if (dvxn_copier_export(&g.hg, word.dptr, sizeof(uint32_t), &cm, why, sizeof(why)) ||
		    (dvxn_copier_map(&cop, &cm, &cmap) &&
		     (dvxn_copier_why(&cop, why, sizeof(why)), 1)))
			printf("(no dvx-copier row: %s)\n", why);
		else
			nproc = 3;
	}
	printf("\nThe NIC's copy a kernel waits for, while another thread makes one driver call "
	       "(CUDA_MODULE_LOADING=%s; the kernel gives up after 2 s)\n\n", lmode ? lmode : "unset");
	printf("| the NIC's copy from | the other thread's call | NIC copy, us: mean (worst) | the kernel waited, us (worst) | the call took, us (worst) | kernel gave up |\n");
	printf("|---|---|---|---|---|---|\n");
	for (proc = 0; proc < nproc; proc++)
	for (r = 0; r < sizeof(rows) / sizeof(rows[0]); r++) {
		double copy = 0, cworst = 0, kworst = 0, aworst = 0;
		unsigned s, gaveup = 0;

		for (s = 0; s < 3; s++) {
			uint64_t ns = 2 * SEC, t0;
			uint32_t zero = 0;
			void *args[] = { &word.dptr, &ns, &outr.dptr };
			struct act a = { .what = rows[r].kind, .flag_dptr = flag_dptr };
			pthread_t th;
			double t;

			die(dvx_gpu_memcpy_htod(&g, word.dptr, &zero, sizeof(zero)), "clear the word");
			act_before(&a);
			die(dvx_gpu_launch(&g, k_wait, 1, 1, 0, &ks, args), "launch d_wait");
			pause_ns(2000000);
			if (pthread_create(&th, NULL, act_main, &a))
				die(-11, "thread");
			pause_ns(2000000);
			t0 = now_ns();
			if (proc == 2) {
				die(dvxn_copier_write(&cop, &cmap, word.dptr, one, sizeof(*one)),
				    cop.why);
			} else if (proc) {
				int err = -EPIPE;
				char c = 'c';

				if (bench_full_io(nic_to[1], &c, 1, 1) ||
				    bench_full_io(nic_from[0], &err, sizeof(err), 0) || err)
					die(err ? err : -EPIPE, "the NIC process's copy");
			} else {
				die(dvx_hal_gpu_memcpy_async(&g.hg, word.dptr,
							     (uint64_t)(uintptr_t)one, sizeof(*one),
							     cs.handle), "the NIC's copy");
				die(dvx_gpu_stream_wait(&cs, 30 * SEC), "the NIC's copy, wait");
			}
			t = (double)(now_ns() - t0) / 1e3;
			die(dvx_gpu_stream_wait(&ks, 30 * SEC), "d_wait");
			pthread_join(th, NULL);
			die(a.err, "the other thread's call");
			act_after(&a);
			copy += t / 3;
			if (t > cworst)
				cworst = t;
			if ((double)out[0] / 1e3 > kworst)
				kworst = (double)out[0] / 1e3;
			if ((double)a.ns / 1e3 > aworst)
				aworst = (double)a.ns / 1e3;
			gaveup += !out[1];
		}
		printf("| %s | %s | %.1f (%.1f) | %.1f | %.1f | %u of 3 |\n",
		       proc == 2 ? "dvx-copier" : proc ? "another process (IPC)" : "this process",
		       rows[r].what, copy, cworst,
		       kworst, aworst, gaveup);
	}
	nic_end();
	if (nproc == 3)
		dvxn_copier_unmap(&cop, &cmap);
	if (cop.pid)
		dvxn_copier_end(&cop);
	dvx_gpu_mem_free(&word);
	dvx_gpu_host_unregister(&outr);
	dvx_gpu_stream_destroy(&cs);
	dvx_gpu_stream_destroy(&ks);
	free(out);
	free(one);
}

/* a child that writes out of bounds (see the top); @how 0: _exit(), 1: exit() */
static int fork_probe(void)
{
	int how;

	for (how = 0; how < 2; how++) {
		pid_t pid;
		int st = 0;

		fflush(NULL);
		pid = fork();
		if (pid < 0)
			die(-errno, "fork");
		if (pid == 0) {
			struct dvx_gpu_module m;
			struct dvx_gpu_stream s;
			struct dvx_gpu_mem mem;
			uint64_t ns = 1000, bad;
			void *f, *args[] = { NULL, &ns, &bad };
			unsigned ngpu = 0;

			if (dvx_gpu_count(dvx_hal_cuda(), &ngpu) || !ngpu)
				_exit(77);	/* no GPU here */
			die(dvx_gpu_open(&g, dvx_hal_cuda(), 0, NULL), "open");
			die(dvx_gpu_module_load(&g, dvx_fatbin_bench_gpu_dma_bench,
						dvx_fatbin_bench_gpu_dma_bench_len, &m), "module");
			die(dvx_gpu_module_function(&m, "d_wait", &f), "function");
			die(dvx_gpu_stream_create(&g, &s), "stream");
			die(dvx_gpu_mem_alloc(&g, 4096, DVX_GPU_MEM_LEGACY, &mem), "memory");
			args[0] = &mem.dptr;	/* d_wait reads the word: in bounds */
			bad = mem.dptr + (1u << 20);
			die(dvx_gpu_launch(&g, f, 1, 1, 0, &s, args), "launch");
			printf("fork-probe child %d (%s): launched, wait: %d\n", how,
			       how ? "exit()" : "_exit()", dvx_gpu_stream_wait(&s, 10 * SEC));
			fflush(NULL);
			if (how)
				exit(0);
			_exit(0);
		}
		waitpid(pid, &st, 0);
		if (WIFEXITED(st) && WEXITSTATUS(st) == 77) {
			printf("gpu-dma-bench fork-probe: no NVIDIA GPU or driver; skipped\n");
			return 77;
		}
		printf("fork-probe child %d: ended, status %#x\n", how, st);
	}
	return 0;
}

int main(int argc, char **argv)
{
	static const struct {
		const char *what;
		int kernel;
		uint32_t blocks, threads, poll;	/* poll 1: every thread, 0: thread 0, 2: none */
	} rows[] = {
		{ "no kernel (the reference)", 0, 0, 0, 0 },
		{ "all SMs x 128, the clock only", 1, 0, 128, 2 },
		{ "1 thread polling host memory", 1, 1, 1, 1 },
		{ "8 blocks x 128 polling", 1, 8, 128, 1 },
		{ "all SMs, 1 poller a block", 1, 0, 128, 0 },
		{ "all SMs x 128 polling", 1, 0, 128, 1 },
	};
	const struct dvx_hal *hal = dvx_hal_cuda();
	struct dvx_gpu_stream ks, cs;
	struct dvx_gpu_hostreg fr, pr;
	struct dvx_gpu_mem dm;
	uint32_t *flag, r, bufk;
	uint8_t *pageable, *pinned;
	void *k;
	unsigned n = 0;
	double base[2] = { 0, 0 };

	if (argc > 1 && !strcmp(argv[1], "fork-probe"))
		return dvx_hal_cuda() ? fork_probe() : 77;
	nic_fork();	/* before CUDA starts in this process */
	if (!hal || !dvx_fatbin_bench_gpu_dma_bench_len || dvx_gpu_count(hal, &n) || !n) {
		nic_end();
		printf("gpu-dma-bench: needs CUDA (CONFIG_DVX_GPU=y, nvcc) and an NVIDIA GPU; skipped\n");
		return 77;
	}
	die(dvx_gpu_open(&g, hal, 0, NULL), "open");
	die(dvx_gpu_module_load(&g, dvx_fatbin_bench_gpu_dma_bench,
				dvx_fatbin_bench_gpu_dma_bench_len, &mod_bench), "module");
	die(dvx_gpu_module_function(&mod_bench, "d_spin", &k), "function");
	k_spin = k;
	die(dvx_gpu_stream_create(&g, &ks), "kernel stream");
	die(dvx_gpu_stream_create(&g, &cs), "copy stream");
	flag = aligned_alloc(4096, 4096);
	pageable = aligned_alloc(4096, BYTES);
	pinned = aligned_alloc(4096, BYTES);
	if (!flag || !pageable || !pinned)
		die(-12, "host memory");
	memset(flag, 0, 4096);
	memset(pageable, 0, BYTES);
	memset(pinned, 0, BYTES);
	die(dvx_gpu_host_register(&g, flag, 4096, 0, &fr), "register the flag");
	die(dvx_gpu_host_register(&g, pinned, BYTES, 0, &pr), "register a buffer");
	die(dvx_gpu_mem_alloc(&g, BYTES, 0, &dm), "device memory");
	printf("gpu-dma-bench: %s, %u SMs; one copy of 64 B - 24 KiB on a stream of its own, "
	       "waited for (the software NIC's GPU copies), while a kernel runs\n\n",
	       g.attr.name, g.attr.sm_count);
	printf("| beside the copies | pageable: us a copy, mean (worst) | x ref | registered: us (worst) | x ref |\n");
	printf("|---|---|---|---|---|\n");
	for (r = 0; r < sizeof(rows) / sizeof(rows[0]) && !(argc > 1 && !strcmp(argv[1], "calls"));
	     r++) {
		double mean[2] = { 0, 0 }, worst[2] = { 0, 0 };
		int s;

		for (bufk = 0; bufk < 2; bufk++) {
			for (s = 0; s < SAMPLES; s++) {
				uint32_t blocks = rows[r].blocks ? rows[r].blocks : g.attr.sm_count;
				uint64_t ns = SEC;
				uint32_t poll = rows[r].poll;
				void *args[] = { &fr.dptr, &ns, &poll };
				double t;

				__atomic_store_n(flag, 0, __ATOMIC_RELEASE);
				if (rows[r].kernel) {
					die(dvx_gpu_launch(&g, k, blocks, rows[r].threads, 0, &ks, args),
					    "launch");
					t = (double)now_ns();
					while ((double)now_ns() - t < 5e6)	/* 5 ms: it runs */
						;
				}
				t = sample(&cs, dm.dptr, bufk ? (void *)pinned : (void *)pageable);
				__atomic_store_n(flag, 1, __ATOMIC_RELEASE);
				if (rows[r].kernel)
					die(dvx_gpu_stream_wait(&ks, 30 * SEC), "kernel");
				mean[bufk] += t / SAMPLES;
				if (t > worst[bufk])
					worst[bufk] = t;
			}
			if (r == 0)
				base[bufk] = mean[bufk];
		}
		printf("| %s | %.1f (%.1f) | %.1f | %.1f (%.1f) | %.1f |\n", rows[r].what, mean[0],
		       worst[0], mean[0] / base[0], mean[1], worst[1], mean[1] / base[1]);
	}
	copy_beside_calls(fr.dptr);
	dvx_gpu_mem_free(&dm);
	dvx_gpu_host_unregister(&pr);
	dvx_gpu_host_unregister(&fr);
	dvx_gpu_stream_destroy(&cs);
	dvx_gpu_stream_destroy(&ks);
	dvx_gpu_module_unload(&mod_bench);
	dvx_gpu_close(&g);
	free(flag);
	free(pageable);
	free(pinned);
	return 0;
}
