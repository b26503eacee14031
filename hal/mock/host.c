// SPDX-License-Identifier: MIT
/*
 * hal/mock/host.c - the mock's host table: memory, PCI functions, limits, a settable clock.
 */
#include "priv.h"

/* ---- host side ---- */

static int mock_mem_alloc(const struct dvx_hal *hal, uint64_t len, uint64_t align, int numa_node,
			  uint32_t flags, struct dvx_hal_mem *mem)
{
	struct dvx_mock *m = dvx_mockp_mock_of(hal);
	struct dvx_mock_call *c = dvx_mockp_begin(m, DVX_MOCK_OP_MEM_ALLOC, -1);
	struct dvx_mock_mem *s = NULL;
	size_t i;
	int err;

	c->len = len;
	c->align = align;
	c->numa_node = numa_node;
	c->flags = flags;
	err = dvx_mockp_injected_err(m, c);
	if (err)
		return dvx_mockp_end(m, c, err);
	for (i = 0; i < DVX_MOCK_MAX_MEMS && !s; i++)
		if (!m->mem[i].live)
			s = &m->mem[i];
	if (!s)
		return dvx_mockp_end(m, c, -ENOMEM);
	err = dvx_host_mem_alloc(hal, len, align, numa_node, flags, mem);
	if (err)
		return dvx_mockp_end(m, c, err);
	s->live = 1;
	s->addr = mem->addr;
	c->addr = (uint64_t)(uintptr_t)mem->addr;
	m->live[DVX_MOCK_RES_MEM]++;
	return dvx_mockp_end(m, c, 0);
}

static int mock_mem_free(const struct dvx_hal *hal, struct dvx_hal_mem *mem)
{
	struct dvx_mock *m = dvx_mockp_mock_of(hal);
	struct dvx_mock_call *c = dvx_mockp_begin(m, DVX_MOCK_OP_MEM_FREE, -1);
	struct dvx_mock_mem *s = NULL;
	size_t i;
	int err;

	c->addr = (uint64_t)(uintptr_t)mem->addr;
	c->len = mem->len;
	err = dvx_mockp_injected_err(m, c);
	if (err)
		return dvx_mockp_end(m, c, err);	/* the memory stays allocated */
	for (i = 0; i < DVX_MOCK_MAX_MEMS && !s; i++)
		if (m->mem[i].live && mem->addr && m->mem[i].addr == mem->addr)
			s = &m->mem[i];
	if (!s)
		return dvx_mockp_end(m, c, -EINVAL);
	err = dvx_host_mem_free(hal, mem);
	if (err)
		return dvx_mockp_end(m, c, err);
	s->live = 0;
	m->live[DVX_MOCK_RES_MEM]--;
	return dvx_mockp_end(m, c, 0);
}

static int mock_pci_list(const struct dvx_hal *hal, uint32_t class_mask, uint32_t class_value,
			 struct dvx_hal_pci_dev *devs, unsigned max, unsigned *count)
{
	struct dvx_mock *m = dvx_mockp_mock_of(hal);
	struct dvx_mock_call *c = dvx_mockp_begin(m, DVX_MOCK_OP_PCI_LIST, -1);
	unsigned i, n = 0;
	int err;

	c->flags = class_mask;
	c->id = class_value;
	c->len = max;
	err = dvx_mockp_injected_err(m, c);
	if (err)
		return dvx_mockp_end(m, c, err);
	for (i = 0; i < m->npci; i++) {
		if ((m->pci[i].class_code & class_mask) != class_value)
			continue;
		if (n < max)
			devs[n] = m->pci[i];
		n++;
	}
	*count = n;
	return dvx_mockp_end(m, c, 0);
}

static int mock_limits(const struct dvx_hal *hal, struct dvx_hal_limits *lim)
{
	struct dvx_mock *m = dvx_mockp_mock_of(hal);
	struct dvx_mock_call *c = dvx_mockp_begin(m, DVX_MOCK_OP_LIMITS, -1);
	int err = dvx_mockp_injected_err(m, c);

	if (err)
		return dvx_mockp_end(m, c, err);
	if (m->limits_err)
		return dvx_mockp_end(m, c, dvx_mockp_neg(m->limits_err));
	*lim = m->limits;
	return dvx_mockp_end(m, c, 0);
}

static uint64_t mock_now_ns(const struct dvx_hal *hal)
{
	struct dvx_mock *m = dvx_mockp_mock_of(hal);
	struct dvx_mock_call *c = dvx_mockp_begin(m, DVX_MOCK_OP_NOW_NS, -1);
	uint64_t now = m->now_ns;

	m->now_ns += m->now_step;
	c->len = now;
	if (m->check)
		(void)m->check(m->check_arg, c);	/* observed, cannot fail */
	dvx_mockp_end(m, c, 0);
	return now;
}

const struct dvx_hal_host_ops dvx_mock_host_ops = {
	.mem_alloc = mock_mem_alloc,
	.mem_free = mock_mem_free,
	.pci_list = mock_pci_list,
	.limits = mock_limits,
	.now_ns = mock_now_ns,
};
