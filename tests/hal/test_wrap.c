// SPDX-License-Identifier: MIT
/*
 * The hal wrappers (hal/nic.c, host.c, gpu.c) and the diag records (hal/diag.c):
 * argument checks, -ENOSYS for a missing table or entry, nic->diag on every failure,
 * a refused DEVX command kept raw (-EREMOTEIO, the status and syndrome as they came).
 */
#include <errno.h>

#include "../lib/dvx_test.h"

#include <dvx/byteorder.h>
#include <dvx/hal.h>

/* ---- a backend whose device ops answer what the test says ---- */

static int stub_ret;		/* what every stub returns */
static int stub_sets_diag;	/* the stub records its own diag first */
static int stub_calls;

static int stub_dev(struct dvx_hal_nic *dev)
{
	stub_calls++;
	if (stub_ret && stub_sets_diag)
		dvx_hal_diag_set(&dev->diag, stub_ret, DVX_DIAG_OS, "stub_op", "backend words");
	return stub_ret;
}

static int s_open(const struct dvx_hal *hal, const char *name, struct dvx_hal_nic *dev)
{
	(void)hal;
	(void)name;
	if (!stub_ret)
		dev->priv = &stub_calls;
	return stub_dev(dev);
}
static int s_close(struct dvx_hal_nic *dev)
{
	return stub_dev(dev);
}
static int s_qdev(struct dvx_hal_nic *dev, struct dvx_hal_nic_attr *a)
{
	(void)a;
	return stub_dev(dev);
}
static int s_qport(struct dvx_hal_nic *dev, uint8_t p, struct dvx_hal_port_attr *a)
{
	(void)p;
	(void)a;
	return stub_dev(dev);
}
static int s_devx(struct dvx_hal_nic *dev, const void *in, size_t il, void *out, size_t ol)
{
	(void)in;
	(void)il;
	(void)out;
	(void)ol;
	return stub_dev(dev);
}
static uint64_t s_now(const struct dvx_hal *hal)
{
	(void)hal;
	return 42;
}

static const struct dvx_hal_nic_ops stub_nic_ops = {
	.nic_open = s_open,
	.nic_close = s_close,
	.nic_query = s_qdev,
	.query_port = s_qport,
	.devx_cmd = s_devx,
};
/* socket stubs: count the call, hand out fd 5 / all bytes, answer stub_ret */
static int ss_fd(const struct dvx_hal *h, const struct dvx_hal_sock_addr *a, int *fd)
{
	(void)h;
	(void)a;
	stub_calls++;
	if (!stub_ret)
		*fd = 5;
	return stub_ret;
}
static int ss_listen(const struct dvx_hal *h, const struct dvx_hal_sock_addr *a, int bl, int *fd)
{
	(void)bl;
	return ss_fd(h, a, fd);
}
static int ss_one(const struct dvx_hal *h, int fd)
{
	(void)h;
	(void)fd;
	stub_calls++;
	return stub_ret;
}
static int ss_accept(const struct dvx_hal *h, int lfd, int *fd)
{
	(void)lfd;
	return ss_fd(h, NULL, fd);
}
static int ss_name(const struct dvx_hal *h, int fd, struct dvx_hal_sock_addr *a)
{
	(void)a;
	return ss_one(h, fd);
}
static int ss_send(const struct dvx_hal *h, int fd, const struct dvx_hal_iov *iov, unsigned n,
		   size_t *sent)
{
	(void)iov;
	(void)n;
	if (!stub_ret)
		*sent = 1;
	return ss_one(h, fd);
}
static int ss_recv(const struct dvx_hal *h, int fd, void *buf, size_t len, size_t *got)
{
	(void)buf;
	if (!stub_ret)
		*got = len;
	return ss_one(h, fd);
}
static int ss_poll(const struct dvx_hal *h, struct dvx_hal_pollfd *fds, unsigned n, uint64_t t)
{
	(void)fds;
	(void)t;
	stub_calls++;
	(void)h;
	return stub_ret ? stub_ret : (int)n;
}
static int ss_unlink(const struct dvx_hal *h, const struct dvx_hal_sock_addr *a)
{
	(void)a;
	return ss_one(h, 0);
}
static int ss_sleep(const struct dvx_hal *h, uint64_t ns)
{
	(void)ns;
	return ss_one(h, 0);
}
static int ss_random(const struct dvx_hal *h, void *buf, size_t len)
{
	if (!stub_ret)
		memset(buf, 0x5a, len);
	return ss_one(h, 0);
}

static const struct dvx_hal_host_ops stub_host_ops = {
	.now_ns = s_now,
	.sock_listen = ss_listen,
	.sock_connect = ss_fd,
	.sock_error = ss_one,
	.sock_accept = ss_accept,
	.sock_name = ss_name,
	.sock_send = ss_send,
	.sock_recv = ss_recv,
	.sock_poll = ss_poll,
	.sock_close = ss_one,
	.sock_unlink = ss_unlink,
	.sleep_ns = ss_sleep,
	.random_bytes = ss_random,
};
static const struct dvx_hal stub_hal = { .nic = &stub_nic_ops, .host = &stub_host_ops,
					 .name = "stub" };

/* tables without entries, and a backend without tables: both answer -ENOSYS */
static const struct dvx_hal_nic_ops empty_nic_ops;
static const struct dvx_hal_host_ops empty_host_ops;
static const struct dvx_hal empty_hal = { .nic = &empty_nic_ops, .host = &empty_host_ops,
					  .name = "empty" };
static const struct dvx_hal bare_hal = { .name = "bare" };

static int reset(void **state)
{
	(void)state;
	stub_ret = 0;
	stub_sets_diag = 0;
	stub_calls = 0;
	return 0;
}

static void open_stub(struct dvx_hal_nic *dev)
{
	memset(dev, 0, sizeof(*dev));
	assert_int_equal(dvx_hal_nic_open(&stub_hal, "x", dev), 0);
}

/* ---- argument checks ---- */

static void test_einval(void **state)
{
	struct dvx_hal_nic dev;
	struct dvx_hal_nic_info info;
	struct dvx_hal_port_attr pa;
	struct dvx_hal_umem_req ureq;
	struct dvx_hal_umem umem;
	struct dvx_hal_mr_req mreq;
	struct dvx_hal_mr mr;
	struct dvx_hal_pd pd;
	struct dvx_hal_uar uar;
	struct dvx_hal_mem mem;
	uint8_t in[16] = { 0 }, out[16], gid[16] = { 0 }, mac[6];
	unsigned count;

	(void)state;
	/* no backend at all */
	assert_int_equal(dvx_hal_nic_list(NULL, &info, 1, &count), -EINVAL);
	assert_int_equal(dvx_hal_nic_list(&stub_hal, NULL, 1, &count), -EINVAL);
	assert_int_equal(dvx_hal_nic_list(&stub_hal, &info, 1, NULL), -EINVAL);
	assert_int_equal(dvx_hal_nic_open(NULL, "x", &dev), -EINVAL);
	assert_int_equal(dvx_hal_nic_open(&stub_hal, NULL, &dev), -EINVAL);
	assert_int_equal(dvx_hal_nic_open(&stub_hal, "", &dev), -EINVAL);
	assert_int_equal(dvx_hal_nic_open(&stub_hal, "x", NULL), -EINVAL);
	assert_int_equal(dvx_hal_nic_close(NULL), -EINVAL);
	assert_int_equal(dvx_hal_limits(&stub_hal, NULL), -EINVAL);
	assert_int_equal(dvx_hal_mem_alloc(&stub_hal, 0, 0, -1, 0, &mem), -EINVAL);
	assert_int_equal(dvx_hal_mem_alloc(&stub_hal, 4096, 3, -1, 0, &mem), -EINVAL);
	assert_int_equal(dvx_hal_mem_free(&stub_hal, NULL), -EINVAL);
	assert_int_equal(dvx_hal_pci_list(NULL, 0, 0, NULL, 0, &count), -EINVAL);

	open_stub(&dev);
	stub_calls = 0;
	/* bad arguments are refused before the backend is called, and named in diag */
	assert_int_equal(dvx_hal_nic_query(&dev, NULL), -EINVAL);
	assert_int_equal(dev.diag.src, DVX_DIAG_ARG);
	assert_string_equal(dev.diag.op, "nic_query");
	assert_int_equal(dvx_hal_query_port(&dev, 0, &pa), -EINVAL);
	assert_string_equal(dev.diag.op, "query_port");
	assert_int_equal(dvx_hal_query_gid(&dev, 1, 0, NULL), -EINVAL);
	assert_int_equal(dvx_hal_devx_cmd(&dev, in, 4, out, sizeof(out)), -EINVAL);
	assert_int_equal(dvx_hal_devx_cmd(&dev, in, sizeof(in), out, 8), -EINVAL);
	assert_int_equal(dvx_hal_devx_cmd(&dev, NULL, sizeof(in), out, sizeof(out)), -EINVAL);
	assert_string_equal(dev.diag.op, "devx_cmd");
	assert_int_equal(dvx_hal_obj_create(&dev, in, sizeof(in), out, sizeof(out), NULL), -EINVAL);
	assert_int_equal(dvx_hal_obj_modify(&dev, NULL, in, sizeof(in), out, sizeof(out)), -EINVAL);
	assert_int_equal(dvx_hal_obj_query(&dev, NULL, in, sizeof(in), out, sizeof(out)), -EINVAL);
	assert_int_equal(dvx_hal_obj_destroy(&dev, NULL), -EINVAL);
	memset(&ureq, 0, sizeof(ureq));
	ureq.dmabuf_fd = -1;
	ureq.len = 4096;
	assert_int_equal(dvx_hal_umem_reg(&dev, &ureq, &umem), -EINVAL);	/* no address */
	ureq.addr = in;
	ureq.len = 0;
	assert_int_equal(dvx_hal_umem_reg(&dev, &ureq, &umem), -EINVAL);	/* no length */
	assert_string_equal(dev.diag.op, "umem_reg");
	assert_int_equal(dvx_hal_umem_dereg(&dev, NULL), -EINVAL);
	assert_int_equal(dvx_hal_uar_alloc(&dev, (enum dvx_uar_type)7, &uar), -EINVAL);
	assert_int_equal(dvx_hal_uar_alloc(&dev, DVX_UAR_BF, NULL), -EINVAL);
	assert_int_equal(dvx_hal_uar_free(&dev, NULL), -EINVAL);
	assert_int_equal(dvx_hal_pd_alloc(&dev, NULL), -EINVAL);
	assert_int_equal(dvx_hal_pd_free(&dev, NULL), -EINVAL);
	assert_int_equal(dvx_hal_eqn_query(&dev, 0, NULL), -EINVAL);
	memset(&mreq, 0, sizeof(mreq));
	mreq.len = 64;
	mreq.dmabuf_fd = -1;
	mreq.flags = DVX_MR_DMABUF;	/* dma-buf without an fd */
	assert_int_equal(dvx_hal_mr_reg(&dev, &pd, &mreq, &mr), -EINVAL);
	mreq.flags = 0;			/* plain without an address */
	assert_int_equal(dvx_hal_mr_reg(&dev, &pd, &mreq, &mr), -EINVAL);
	assert_int_equal(dvx_hal_mr_reg(&dev, NULL, &mreq, &mr), -EINVAL);
	assert_string_equal(dev.diag.op, "mr_reg");
	assert_int_equal(dvx_hal_mr_dereg(&dev, NULL), -EINVAL);
	assert_int_equal(dvx_hal_roce_rmac(&dev, &pd, 0, 0, gid, mac), -EINVAL);
	assert_int_equal(dvx_hal_roce_rmac(&dev, &pd, 1, 0, NULL, mac), -EINVAL);
	assert_string_equal(dev.diag.op, "roce_rmac");
	assert_int_equal(stub_calls, 0);
}

/* ---- sockets: arguments, outputs on failure, passing through ---- */

static void test_sock(void **state)
{
	struct dvx_hal_sock_addr ua, ta, bad;
	struct dvx_hal_iov iov[DVX_HAL_SOCK_IOV_MAX + 1];
	struct dvx_hal_pollfd p = { .fd = 3, .events = DVX_HAL_POLL_IN };
	char buf[8];
	size_t n;
	int fd, i;

	(void)state;
	memset(&ua, 0, sizeof(ua));
	ua.family = DVX_HAL_SOCK_UNIX;
	strcpy(ua.path, "/tmp/x");
	memset(&ta, 0, sizeof(ta));
	ta.family = DVX_HAL_SOCK_IP4;
	ta.port = 80;
	for (i = 0; i <= DVX_HAL_SOCK_IOV_MAX; i++) {
		iov[i].base = buf;
		iov[i].len = 1;
	}

	/* bad arguments: -EINVAL before the backend, the outputs say "nothing" */
	fd = 9;
	assert_int_equal(dvx_hal_sock_listen(NULL, &ua, 1, &fd), -EINVAL);
	assert_int_equal(dvx_hal_sock_listen(&stub_hal, NULL, 1, &fd), -EINVAL);
	assert_int_equal(dvx_hal_sock_listen(&stub_hal, &ua, 0, &fd), -EINVAL);
	assert_int_equal(dvx_hal_sock_listen(&stub_hal, &ua, 1, NULL), -EINVAL);
	bad = ua;
	bad.path[0] = 0;			/* empty path */
	assert_int_equal(dvx_hal_sock_listen(&stub_hal, &bad, 1, &fd), -EINVAL);
	memset(bad.path, 'a', sizeof(bad.path));	/* no NUL */
	assert_int_equal(dvx_hal_sock_listen(&stub_hal, &bad, 1, &fd), -EINVAL);
	bad.family = 9;
	assert_int_equal(dvx_hal_sock_connect(&stub_hal, &bad, &fd), -EINVAL);
	bad = ta;
	bad.port = 0;				/* connect needs a port, listen does not */
	assert_int_equal(dvx_hal_sock_connect(&stub_hal, &bad, &fd), -EINVAL);
	assert_int_equal(dvx_hal_sock_listen(&stub_hal, &bad, 1, &fd), 0);
	assert_int_equal(fd, 5);
	assert_int_equal(dvx_hal_sock_error(&stub_hal, -1), -EINVAL);
	assert_int_equal(dvx_hal_sock_accept(&stub_hal, -1, &fd), -EINVAL);
	assert_int_equal(dvx_hal_sock_accept(&stub_hal, 3, NULL), -EINVAL);
	assert_int_equal(dvx_hal_sock_name(&stub_hal, 3, NULL), -EINVAL);
	assert_int_equal(dvx_hal_sock_send(&stub_hal, 3, NULL, 1, &n), -EINVAL);
	assert_int_equal(dvx_hal_sock_send(&stub_hal, 3, iov, 0, &n), -EINVAL);
	assert_int_equal(dvx_hal_sock_send(&stub_hal, 3, iov, DVX_HAL_SOCK_IOV_MAX + 1, &n),
			 -EINVAL);
	assert_int_equal(dvx_hal_sock_send(&stub_hal, 3, iov, 1, NULL), -EINVAL);
	iov[0].len = 0;				/* nothing to send at all */
	assert_int_equal(dvx_hal_sock_send(&stub_hal, 3, iov, 1, &n), -EINVAL);
	iov[0].base = NULL;
	iov[0].len = 1;				/* bytes without an address */
	assert_int_equal(dvx_hal_sock_send(&stub_hal, 3, iov, 1, &n), -EINVAL);
	iov[0].base = buf;
	assert_int_equal(dvx_hal_sock_recv(&stub_hal, 3, NULL, 1, &n), -EINVAL);
	assert_int_equal(dvx_hal_sock_recv(&stub_hal, 3, buf, 0, &n), -EINVAL);
	assert_int_equal(dvx_hal_sock_recv(&stub_hal, -2, buf, 1, &n), -EINVAL);
	assert_int_equal(dvx_hal_sock_poll(&stub_hal, NULL, 1, 0), -EINVAL);
	assert_int_equal(dvx_hal_sock_poll(NULL, &p, 1, 0), -EINVAL);
	assert_int_equal(dvx_hal_sock_close(&stub_hal, -1), -EINVAL);
	assert_int_equal(dvx_hal_sock_unlink(&stub_hal, &ta), -EINVAL);	/* not UNIX */
	assert_int_equal(dvx_hal_sock_unlink(&stub_hal, NULL), -EINVAL);
	assert_int_equal(dvx_hal_sleep_ns(NULL, 1), -EINVAL);
	assert_int_equal(dvx_hal_random_bytes(NULL, buf, 1), -EINVAL);
	assert_int_equal(dvx_hal_random_bytes(&stub_hal, NULL, 1), -EINVAL);
	assert_int_equal(dvx_hal_random_bytes(&stub_hal, buf, 0), -EINVAL);
	assert_int_equal(dvx_hal_random_bytes(&stub_hal, buf, DVX_HAL_RANDOM_MAX + 1), -EINVAL);
	assert_int_equal(stub_calls, 1);	/* only the good listen */

	/* good arguments reach the backend, its answer comes back as it is */
	stub_calls = 0;
	assert_int_equal(dvx_hal_sock_connect(&stub_hal, &ta, &fd), 0);
	assert_int_equal(fd, 5);
	assert_int_equal(dvx_hal_sock_accept(&stub_hal, 3, &fd), 0);
	assert_int_equal(dvx_hal_sock_send(&stub_hal, 3, iov, DVX_HAL_SOCK_IOV_MAX, &n), 0);
	assert_int_equal(n, 1);
	assert_int_equal(dvx_hal_sock_recv(&stub_hal, 3, buf, 4, &n), 0);
	assert_int_equal(n, 4);
	assert_int_equal(dvx_hal_sock_poll(&stub_hal, &p, 1, 5), 1);
	assert_int_equal(dvx_hal_sock_poll(&stub_hal, NULL, 0, 5), 0);
	assert_int_equal(dvx_hal_sock_name(&stub_hal, 3, &bad), 0);
	assert_int_equal(dvx_hal_sock_error(&stub_hal, 3), 0);
	assert_int_equal(dvx_hal_sock_close(&stub_hal, 3), 0);
	assert_int_equal(dvx_hal_sock_unlink(&stub_hal, &ua), 0);
	assert_int_equal(dvx_hal_sleep_ns(&stub_hal, 1), 0);
	memset(buf, 0, 4);
	assert_int_equal(dvx_hal_random_bytes(&stub_hal, buf, 4), 0);
	assert_int_equal(buf[0] & 0xff, 0x5a);
	assert_int_equal(buf[3] & 0xff, 0x5a);
	assert_int_equal(stub_calls, 12);
	stub_ret = -EPIPE;
	fd = 9;
	n = 9;
	assert_int_equal(dvx_hal_sock_connect(&stub_hal, &ta, &fd), -EPIPE);
	assert_int_equal(fd, -1);
	assert_int_equal(dvx_hal_sock_send(&stub_hal, 3, iov, 1, &n), -EPIPE);
	assert_int_equal(n, 0);
	n = 9;
	assert_int_equal(dvx_hal_sock_recv(&stub_hal, 3, buf, 1, &n), -EPIPE);
	assert_int_equal(n, 0);
	assert_int_equal(dvx_hal_sock_poll(&stub_hal, &p, 1, 5), -EPIPE);
}

/* ---- entries the backend lacks ---- */

static void test_enosys(void **state)
{
	struct dvx_hal_nic dev;
	struct dvx_hal_nic_info info;
	struct dvx_hal_nic_attr attr;
	struct dvx_hal_pd pd;
	struct dvx_hal_uar uar;
	struct dvx_hal_mem mem;
	struct dvx_hal_limits lim;
	struct dvx_hal_sock_addr sa;
	struct dvx_hal_pollfd p = { .fd = 3, .events = DVX_HAL_POLL_IN };
	char buf[4] = "abc";
	struct dvx_hal_iov iov = { .base = buf, .len = 3 };
	unsigned count;
	uint32_t eqn;
	size_t n;
	int fd, i;

	(void)state;
	assert_int_equal(dvx_hal_nic_list(&empty_hal, &info, 1, &count), -ENOSYS);
	assert_int_equal(dvx_hal_mem_alloc(&empty_hal, 4096, 0, -1, 0, &mem), -ENOSYS);
	assert_int_equal(dvx_hal_mem_free(&empty_hal, &mem), -ENOSYS);
	assert_int_equal(dvx_hal_pci_list(&empty_hal, 0, 0, NULL, 0, &count), -ENOSYS);
	assert_int_equal(dvx_hal_limits(&empty_hal, &lim), -ENOSYS);
	/* no table at all: the same answers */
	assert_int_equal(dvx_hal_nic_list(&bare_hal, &info, 1, &count), -ENOSYS);
	assert_int_equal(dvx_hal_mem_alloc(&bare_hal, 4096, 0, -1, 0, &mem), -ENOSYS);
	assert_int_equal(dvx_hal_limits(&bare_hal, &lim), -ENOSYS);
	memset(&dev, 0, sizeof(dev));
	assert_int_equal(dvx_hal_nic_open(&bare_hal, "mlx5_0", &dev), -ENOSYS);
	assert_non_null(strstr(dev.diag.msg, "bare"));
	assert_int_equal(dvx_hal_pd_alloc(&dev, &pd), -ENOSYS);
	assert_string_equal(dev.diag.op, "pd_alloc");
	assert_true(dvx_hal_now_ns(&bare_hal) > 0);

	memset(&dev, 0, sizeof(dev));
	assert_int_equal(dvx_hal_nic_open(&empty_hal, "mlx5_0", &dev), -ENOSYS);
	assert_int_equal(dev.diag.err, -ENOSYS);
	assert_string_equal(dev.diag.op, "nic_open");
	assert_non_null(strstr(dev.diag.msg, "empty"));	/* names the backend */

	/* a device handle of a backend lacking every device op */
	dev.hal = &empty_hal;
	assert_int_equal(dvx_hal_nic_query(&dev, &attr), -ENOSYS);
	assert_string_equal(dev.diag.op, "nic_query");
	assert_int_equal(dvx_hal_pd_alloc(&dev, &pd), -ENOSYS);
	assert_string_equal(dev.diag.op, "pd_alloc");
	assert_int_equal(dvx_hal_uar_alloc(&dev, DVX_UAR_NC_SHARED, &uar), -ENOSYS);
	assert_int_equal(dvx_hal_eqn_query(&dev, 0, &eqn), -ENOSYS);
	assert_string_equal(dev.diag.op, "eqn_query");
	assert_int_equal(dvx_hal_nic_close(&dev), -ENOSYS);
	dvx_hal_nic_progress(&dev);	/* optional: nothing happens */
	assert_true(dvx_hal_now_ns(&empty_hal) > 0);	/* falls back to CLOCK_MONOTONIC */
	assert_int_equal(dvx_hal_now_ns(&stub_hal), 42);

	/* sockets: the outputs still say "nothing" */
	memset(&sa, 0, sizeof(sa));
	sa.family = DVX_HAL_SOCK_UNIX;
	strcpy(sa.path, "/tmp/x");
	for (i = 0; i < 2; i++) {
		const struct dvx_hal *h = i ? &bare_hal : &empty_hal;

		fd = 9;
		n = 9;
		assert_int_equal(dvx_hal_sock_listen(h, &sa, 1, &fd), -ENOSYS);
		assert_int_equal(fd, -1);
		assert_int_equal(dvx_hal_sock_connect(h, &sa, &fd), -ENOSYS);
		assert_int_equal(dvx_hal_sock_error(h, 3), -ENOSYS);
		assert_int_equal(dvx_hal_sock_accept(h, 3, &fd), -ENOSYS);
		assert_int_equal(fd, -1);
		assert_int_equal(dvx_hal_sock_name(h, 3, &sa), -ENOSYS);
		sa.family = DVX_HAL_SOCK_UNIX;
		strcpy(sa.path, "/tmp/x");
		assert_int_equal(dvx_hal_sock_send(h, 3, &iov, 1, &n), -ENOSYS);
		assert_int_equal(n, 0);
		n = 9;
		assert_int_equal(dvx_hal_sock_recv(h, 3, buf, 1, &n), -ENOSYS);
		assert_int_equal(n, 0);
		assert_int_equal(dvx_hal_sock_poll(h, &p, 1, 0), -ENOSYS);
		assert_int_equal(dvx_hal_sock_close(h, 3), -ENOSYS);
		assert_int_equal(dvx_hal_sock_unlink(h, &sa), -ENOSYS);
		assert_int_equal(dvx_hal_sleep_ns(h, 1), -ENOSYS);
		assert_int_equal(dvx_hal_random_bytes(h, buf, 1), -ENOSYS);
	}
}

/* ---- diag on failure ---- */

static void test_failure_diag(void **state)
{
	struct dvx_hal_nic dev;
	struct dvx_hal_nic_attr attr;
	struct dvx_hal_port_attr pa;
	uint8_t in[16] = { 0 }, out[16];

	(void)state;
	open_stub(&dev);
	assert_int_equal(dev.diag.err, 0);

	/* a backend that says only -EIO: the wrapper names the op */
	stub_ret = -EIO;
	assert_int_equal(dvx_hal_nic_query(&dev, &attr), -EIO);
	assert_int_equal(dev.diag.err, -EIO);
	assert_int_equal(dev.diag.src, DVX_DIAG_OS);
	assert_string_equal(dev.diag.op, "nic_query");

	/* a backend that records its own words keeps them */
	stub_sets_diag = 1;
	stub_ret = -EPERM;
	assert_int_equal(dvx_hal_devx_cmd(&dev, in, sizeof(in), out, sizeof(out)), -EPERM);
	assert_string_equal(dev.diag.op, "stub_op");
	assert_string_equal(dev.diag.msg, "backend words");

	/* a positive return is not an errno: -EIO */
	stub_sets_diag = 0;
	stub_ret = 5;
	assert_int_equal(dvx_hal_query_port(&dev, 1, &pa), -EIO);
	assert_string_equal(dev.diag.op, "query_port");

	/* a success clears the previous failure */
	stub_ret = 0;
	assert_int_equal(dvx_hal_nic_query(&dev, &attr), 0);
	assert_int_equal(dev.diag.err, 0);

	/* a failed close keeps the handle; a good one clears priv */
	stub_ret = -EBUSY;
	assert_int_equal(dvx_hal_nic_close(&dev), -EBUSY);
	assert_non_null(dev.priv);
	assert_string_equal(dev.diag.op, "nic_close");
	stub_ret = 0;
	assert_int_equal(dvx_hal_nic_close(&dev), 0);
	assert_null(dev.priv);
}

static void log_sink(void *arg, int level, const char *msg)
{
	(void)level;
	snprintf((char *)arg, 64, "%s", msg);
}

static void test_open_keeps_log_and_clears(void **state)
{
	struct dvx_hal_nic dev;
	char buf[64] = "";

	(void)state;
	memset(&dev, 0xa5, sizeof(dev));	/* garbage from the caller's storage */
	dev.log.fn = log_sink;
	dev.log.arg = buf;
	dev.log.level = DVX_LOG_INFO;
	assert_int_equal(dvx_hal_nic_open(&stub_hal, "x", &dev), 0);
	assert_ptr_equal(dev.hal, &stub_hal);
	assert_int_equal(dev.diag.err, 0);
	assert_ptr_equal(dev.log.fn, log_sink);
	dvx_hal_log(&dev.log, DVX_LOG_INFO, "hello %d", 7);
	assert_string_equal(buf, "hello 7");
	dvx_hal_log(&dev.log, DVX_LOG_DEBUG, "too verbose");
	assert_string_equal(buf, "hello 7");

	/* a failed open leaves no handle but keeps the backend */
	stub_ret = -EACCES;
	assert_int_equal(dvx_hal_nic_open(&stub_hal, "x", &dev), -EACCES);
	assert_null(dev.priv);
	assert_ptr_equal(dev.hal, &stub_hal);
	assert_string_equal(dev.diag.op, "nic_open");
}

/* ---- a refused DEVX command is kept as the NIC said it ---- */

/*
 * The UAR mmap offset's mapping type, as the mlx5 kernel driver encodes it: bits 8-15 of
 * the offset in pages are the mmap command, 3 = non-cached pages; anything else maps
 * write-combining. Values built by hand, 4 KiB and 64 KiB pages.
 */
static void test_uar_mmap_is_nc(void **state)
{
	(void)state;
	assert_int_equal(dvx_hal_uar_mmap_is_nc((3ull << 8) * 4096, 4096), 1);
	assert_int_equal(dvx_hal_uar_mmap_is_nc(((3ull << 8) | 5) * 4096, 4096), 1);	/* index 5 */
	assert_int_equal(dvx_hal_uar_mmap_is_nc((3ull << 8) * 65536, 65536), 1);
	assert_int_equal(dvx_hal_uar_mmap_is_nc(0x3000, 4096), 0);	/* index 3, command 0 */
	assert_int_equal(dvx_hal_uar_mmap_is_nc((2ull << 8) * 4096, 4096), 0);
	assert_int_equal(dvx_hal_uar_mmap_is_nc((0x103ull << 8) * 4096, 4096), 1);	/* bits past 15 */
	assert_int_equal(dvx_hal_uar_mmap_is_nc((3ull << 8) * 4096, 65536), 0);	/* wrong page size */
	assert_int_equal(dvx_hal_uar_mmap_is_nc(12345, 0), 0);
}

static void test_diag_devx(void **state)
{
	struct dvx_diag d;
	uint8_t in[16] = { 0 }, out[16] = { 0 };

	(void)state;
	dvx_put_be32(in, 0x05000000u);	/* opcode 0x500 CREATE_QP */
	out[0] = 0x08;			/* EXCEED_LIM */
	dvx_put_be32(out + 4, 0x0018af6u);
	assert_int_equal(dvx_hal_diag_devx(&d, "obj_create", in, out, ENOMEM), -EREMOTEIO);
	assert_int_equal(d.err, -EREMOTEIO);
	assert_int_equal(d.src, DVX_DIAG_DEVX);
	assert_int_equal(d.cmd_opcode, 0x500);
	assert_int_equal(d.status, 0x08);
	assert_int_equal(d.syndrome, 0x0018af6u);
	assert_int_equal(d.sys_errno, ENOMEM);	/* the kernel's own errno, kept too */
	assert_string_equal(d.op, "obj_create");
	assert_non_null(strstr(d.msg, "0x500"));
	assert_non_null(strstr(d.msg, "status 0x08"));
	assert_non_null(strstr(d.msg, "0x00018af6"));

	/* status 0 but a transport errno: that errno */
	memset(out, 0, sizeof(out));
	assert_int_equal(dvx_hal_diag_devx(&d, "devx_cmd", in, out, EPERM), -EPERM);
	assert_int_equal(d.status, 0);
	/* nothing known at all: -EIO */
	assert_int_equal(dvx_hal_diag_devx(&d, "devx_cmd", in, NULL, 0), -EIO);
	/* no record to fill: still -EREMOTEIO for a refusal */
	out[0] = 0x06;
	assert_int_equal(dvx_hal_diag_devx(NULL, "devx_cmd", in, out, 0), -EREMOTEIO);
	/* long op names are cut, never overflow */
	dvx_hal_diag_set(&d, -EINVAL, DVX_DIAG_ARG,
			 "an operation name much longer than thirty-two characters", "%s", "x");
	assert_int_equal(strlen(d.op), sizeof(d.op) - 1);
	assert_int_equal(dvx_hal_diag_set(NULL, -EINVAL, DVX_DIAG_ARG, "op", NULL), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(test_einval, reset),
		cmocka_unit_test_setup(test_sock, reset),
		cmocka_unit_test_setup(test_enosys, reset),
		cmocka_unit_test_setup(test_failure_diag, reset),
		cmocka_unit_test_setup(test_open_keeps_log_and_clears, reset),
		cmocka_unit_test_setup(test_diag_devx, reset),
		cmocka_unit_test(test_uar_mmap_is_nc),
	};

	return cmocka_run_group_tests_name("hal-wrap", tests, NULL, NULL);
}
