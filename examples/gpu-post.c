// SPDX-License-Identifier: MIT
/*
 * examples/gpu-post.c - GPU-initiated RDMA: the host creates a CQ and a pair of
 * connected QPs in its own memory, hands the GPU a view of one QP and of the CQ, and a
 * kernel (examples/gpu-post.cu) posts 64 RDMA WRITEs itself, rings the doorbell and
 * polls the completions; the host then checks the bytes. The software NIC by default
 * (its progress thread plays the NIC), a ConnectX with --dev NAME.
 *
 *   nvcc -fatbin -gencode arch=compute_90,code=sm_90 $(pkg-config --cflags dvx) \
 *        gpu-post.cu -o gpu-post.fatbin
 *   cc gpu-post.c $(pkg-config --cflags --libs dvx) -o gpu-post
 *   ./gpu-post gpu-post.fatbin [--dev mlx5_0]
 *
 * Exit status: 0 done and checked; 77 no NVIDIA GPU (or a libdvx without CUDA), the
 * example could not run; 1 a failure, said on stderr with the library's words; 2 usage.
 *
 * The queues here are in host memory registered for the GPU (DVX_GPU_Q_SYS: the GPU
 * orders its writes at system scope): the simplest placement, the same on the software
 * NIC and on hardware. Rings in GPU memory (dma-buf umems, GPU-scope ordering) are
 * faster for the GPU (docs/gpu.md, bench/RESULTS.md); on hardware the UAR page is
 * registered as I/O memory (DVX_GPU_HOST_IOMEM). Every call returns 0 or a negative
 * errno (docs/errors.md); every wait is bounded.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <dvx/gpu/gpu.h>
#include <dvx/gpu/queue.h>
#include <dvx/hal/hal.h>
#include <dvx/nic/mr.h>
#include <dvx/nic/nic.h>
#include <dvx/nic/qp.h>
#include <dvx/hal/sim.h>

#define NWRITES 64u		/* one per GPU thread; the SQ holds them all */
#define LEN 256u		/* bytes per WRITE */
#define RING_BYTES (1u << 16)
#define SEC 1000000000ull

static struct dvx_nic nic;
static struct dvx_gpu gpu;

static int nic_fail(int err, const char *what)
{
	fprintf(stderr, "%s: %d (%s)\n", what, err, nic.hal.diag.msg);
	return 1;
}

static int gpu_fail(int err, const char *what)
{
	fprintf(stderr, "%s: %d (%s: %s)\n", what, err, gpu.hg.diag.op, gpu.hg.diag.msg);
	return 1;
}

/* the whole file, or NULL */
static void *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	void *p = NULL;
	long n;

	if (!f)
		return NULL;
	if (!fseek(f, 0, SEEK_END) && (n = ftell(f)) > 0 && !fseek(f, 0, SEEK_SET) &&
	    (p = malloc((size_t)n)) && fread(p, 1, (size_t)n, f) == (size_t)n)
		*len = (size_t)n;
	else {
		free(p);
		p = NULL;
	}
	fclose(f);
	return p;
}

static int run(const char *fatbin, const char *dev)
{
	const struct dvx_hal *cuda = dvx_hal_cuda(), *hal;
	struct dvx_sim_fabric *fab = NULL;
	struct dvx_nic_cfg na;
	struct dvx_umem_cfg ua;
	struct dvx_mr_cfg ma;
	struct dvx_cq_cfg ca;
	struct dvx_qp_cfg qa;
	struct dvx_qp_connect_cfg conn;
	struct dvx_mem_req wq, dbr;
	struct dvx_umem umem;
	struct dvx_mr mr;
	struct dvx_cq cq;
	struct dvx_qp qp[2];
	struct dvx_gpu_hostreg rreg, ureg;
	struct dvx_gpu_mem dmem;
	struct dvx_gpu_module mod;
	struct dvx_gpu_stream s;
	struct dvx_gpu_sq sv;
	struct dvx_gpu_cq cv;
	void *fab_mem = NULL, *image, *k;
	uint8_t *rings, *data;
	uint64_t off, laddr, raddr, timeout = 10 * SEC, res_dptr;
	uint32_t lkey, rkey, len = LEN;
	int32_t result[2] = { 0, 0 };
	unsigned ngpus = 0, i;
	size_t image_len = 0;
	int err, rc = 1;

	if (!cuda || dvx_gpu_count(cuda, &ngpus) || !ngpus) {
		printf("gpu-post: needs an NVIDIA GPU and driver (and a libdvx built with CUDA)\n");
		return 77;
	}
	image = slurp(fatbin, &image_len);
	if (!image) {
		fprintf(stderr, "gpu-post: cannot read %s\n", fatbin);
		return 1;
	}

	/* the NIC: the software NIC with its progress thread, or a ConnectX */
	memset(&na, 0, sizeof(na));
	if (dev) {
		hal = dvx_hal_linux();
		na.name = dev;
		if (!hal) {
			fprintf(stderr, "gpu-post: this libdvx was built without rdma-core\n");
			return 1;
		}
	} else {
		struct dvx_sim_fabric_cfg fc;
		struct dvx_sim_nic_cfg nc;
		size_t sz;

		dvx_sim_fabric_cfg_default(&fc);
		fc.max_nics = 1;
		sz = dvx_sim_fabric_mem_size(&fc);
		fab_mem = calloc(1, sz);
		if (!fab_mem || dvx_sim_fabric_init(fab_mem, sz, &fc, &fab))
			return 1;
		dvx_sim_nic_cfg_default(&nc, 0);
		if (dvx_sim_add_nic(fab, &nc) < 0 || dvx_sim_start(fab))
			return 1;
		hal = dvx_sim_hal(fab);
		na.name = "sim_0";
	}
	rings = aligned_alloc(4096, RING_BYTES);
	data = aligned_alloc(4096, 2 * NWRITES * LEN);
	if (!rings || !data)
		return 1;
	memset(rings, 0, RING_BYTES);
	memset(data, 0, 2 * NWRITES * LEN);
	memset(&nic, 0, sizeof(nic));
	memset(&umem, 0, sizeof(umem));
	memset(&mr, 0, sizeof(mr));
	memset(&cq, 0, sizeof(cq));
	memset(qp, 0, sizeof(qp));
	memset(&gpu, 0, sizeof(gpu));

	/* the host part, as in rdma-write.c: NIC, umem, MR, one CQ, two connected QPs */
	if ((err = dvx_nic_open(&nic, hal, &na)))
		return nic_fail(err, "dvx_nic_open");
	memset(&ua, 0, sizeof(ua));
	ua.addr = rings;
	ua.len = RING_BYTES;
	if ((err = dvx_umem_reg(&nic, &ua, &umem))) {
		rc = nic_fail(err, "dvx_umem_reg");
		goto close;
	}
	memset(&ma, 0, sizeof(ma));
	ma.addr = data;
	ma.len = 2 * NWRITES * LEN;
	ma.access = DVX_ACCESS_LOCAL_WRITE | DVX_ACCESS_REMOTE_WRITE;
	if ((err = dvx_mr_reg(&nic, &ma, &mr))) {
		rc = nic_fail(err, "dvx_mr_reg");
		goto umem;
	}
	memset(&ca, 0, sizeof(ca));
	ca.depth = 2 * NWRITES;
	ca.ring_umem = &umem;
	ca.dbr_umem = &umem;
	ca.dbr_offset = RING_BYTES - 64;
	if ((err = dvx_cq_create(&nic, &ca, &cq))) {
		rc = nic_fail(err, "dvx_cq_create");
		goto mr;
	}
	off = DVX_CQ_RING_BYTES(2 * NWRITES);
	for (i = 0; i < 2; i++) {
		memset(&qa, 0, sizeof(qa));
		qa.sq_depth = NWRITES;
		qa.send_cq = &cq;
		if ((err = dvx_qp_mem_req(&qa, &wq, &dbr))) {
			rc = nic_fail(err, "dvx_qp_mem_req");
			goto qps;
		}
		off = (off + wq.align - 1) / wq.align * wq.align;
		qa.wq_umem = &umem;
		qa.wq_offset = off;
		qa.dbr_umem = &umem;
		qa.dbr_offset = RING_BYTES - 64 + 8 * (uint64_t)(i + 1);
		off += wq.bytes;
		if ((err = dvx_qp_create(&nic, &qa, &qp[i]))) {
			rc = nic_fail(err, "dvx_qp_create");
			goto qps;
		}
	}
	dvx_qp_connect_cfg_init(&conn);
	conn.access = DVX_ACCESS_REMOTE_WRITE;
	if ((err = dvx_qp_connect_pair(&qp[0], &qp[1], &conn))) {
		rc = nic_fail(err, "dvx_qp_connect_pair");
		goto qps;
	}
	for (i = 0; i < NWRITES * LEN; i++)
		data[i] = (uint8_t)(i * 13 + 5);

	/* the GPU part: the rings and the UAR register made reachable from kernels, the
	 * posting counters and the result in device memory, the views */
	if ((err = dvx_gpu_open(&gpu, cuda, 0, NULL))) {
		rc = gpu_fail(err, "dvx_gpu_open");
		goto qps;
	}
	if ((err = dvx_gpu_host_register(&gpu, rings, RING_BYTES, 0, &rreg))) {
		rc = gpu_fail(err, "dvx_gpu_host_register(rings)");
		goto gpu;
	}
	if ((err = dvx_gpu_host_register(&gpu, qp[0].sq.uar_reg, 8,
					 dev ? DVX_GPU_HOST_IOMEM : 0, &ureg))) {
		rc = gpu_fail(err, "dvx_gpu_host_register(UAR)");
		goto rreg;
	}
	if ((err = dvx_gpu_mem_alloc(&gpu, 4096, 0, &dmem))) {
		rc = gpu_fail(err, "dvx_gpu_mem_alloc");
		goto ureg;
	}
	/* zeroed counters (256 bytes at 0), consumer index at 256, result at 512 */
	{
		static const uint8_t zero[1024];

		err = dvx_gpu_memcpy_htod(&gpu, dmem.dptr, zero, sizeof(zero));
	}
	if (!err)
		err = dvx_gpu_sq_view_init(&sv,
					   &(struct dvx_gpu_sq_cfg){
						   DVX_GPU_Q_SYS,
						   rreg.dptr + (uint64_t)(qp[0].sq.wq.buf - rings),
						   qp[0].sq.nwqebb, qp[0].qpn,
						   qp[0].sq.wq.max_inline,
						   rreg.dptr +
							   (uint64_t)((uint8_t *)qp[0].sq.dbrec -
								      rings),
						   ureg.dptr, dmem.dptr, dmem.dptr + 256 });
	if (!err)
		err = dvx_gpu_cq_view_init(&cv, DVX_GPU_Q_SYS,
					   rreg.dptr + (uint64_t)(cq.ring - rings), cq.mcq.log_size,
					   cq.cqn, rreg.dptr + (uint64_t)((uint8_t *)cq.dbrec - rings));
	if (err) {
		rc = gpu_fail(err, "the views");
		goto dmem;
	}
	if ((err = dvx_gpu_module_load(&gpu, image, image_len, &mod))) {
		rc = gpu_fail(err, "dvx_gpu_module_load");
		goto dmem;
	}
	if ((err = dvx_gpu_module_function(&mod, "ex_post", &k)) ||
	    (err = dvx_gpu_stream_create(&gpu, &s))) {
		rc = gpu_fail(err, "function or stream");
		goto mod;
	}

	/* the kernel: 64 threads, one WRITE each, then one thread polls the 64 CQEs */
	laddr = (uint64_t)(uintptr_t)data;
	raddr = laddr + NWRITES * LEN;
	lkey = mr.lkey;
	rkey = mr.rkey;
	res_dptr = dmem.dptr + 512;
	{
		void *args[] = { &sv, &cv, &laddr, &lkey, &raddr, &rkey, &len, &timeout, &res_dptr };

		err = dvx_gpu_launch(&gpu, k, 1, NWRITES, 0, &s, args);
	}
	if (!err)
		err = dvx_gpu_stream_wait(&s, 30 * SEC);
	if (!err)
		err = dvx_gpu_memcpy_dtoh(&gpu, result, res_dptr, sizeof(result));
	if (err) {
		rc = gpu_fail(err, "launch, wait or copy");
	} else if (result[0] != (int32_t)NWRITES) {
		fprintf(stderr, "gpu-post: the kernel got %d (syndrome %#x)\n", result[0],
			(unsigned)result[1]);
	} else if (memcmp(data, data + NWRITES * LEN, NWRITES * LEN)) {
		fprintf(stderr, "gpu-post: the bytes did not arrive\n");
	} else {
		printf("gpu-post: %s: %u RDMA WRITEs of %u bytes posted and completed by GPU threads "
		       "on %s, bytes checked\n", gpu.attr.name, NWRITES, LEN, na.name);
		rc = 0;
	}
	dvx_gpu_stream_destroy(&s);
mod:
	dvx_gpu_module_unload(&mod);
dmem:
	dvx_gpu_mem_free(&dmem);
ureg:
	dvx_gpu_host_unregister(&ureg);
rreg:
	dvx_gpu_host_unregister(&rreg);
gpu:
	dvx_gpu_close(&gpu);
qps:
	for (i = 2; i-- > 0;)
		if (qp[i].live)
			dvx_qp_destroy(&qp[i]);
	dvx_cq_destroy(&cq);
mr:
	dvx_mr_dereg(&mr);
umem:
	dvx_umem_dereg(&umem);
close:
	dvx_nic_close(&nic);
	if (fab) {
		dvx_sim_fini(fab);
		free(fab_mem);
	}
	free(rings);
	free(data);
	free(image);
	return rc;
}

int main(int argc, char **argv)
{
	if (argc == 2)
		return run(argv[1], NULL);
	if (argc == 4 && !strcmp(argv[2], "--dev"))
		return run(argv[1], argv[3]);
	fprintf(stderr, "usage: %s FATBIN [--dev NAME]\n", argv[0]);
	return 2;
}
