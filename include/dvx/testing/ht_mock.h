/* SPDX-License-Identifier: MIT */
/*
 * dvx/testing/ht_mock.h - a mock of the host transport's interface (dvx/ht/ht.h) for
 * the cmocka tests of algorithms written against it (libdvx-test.a; docs/testing.md
 * "Testing your code against dvx", docs/ht.md).
 *
 * Two struct dvx_ht_mock are the two ends of one pair of transports in one process:
 * no NIC, no bootstrap, no thread. Chunks and control messages are matched in order
 * per channel exactly as the real transport matches them, and copied when either end
 * is progressed (dvx_ht_test(), dvx_ht_wait(), dvx_ht_progress()), after a delay
 * the test chooses. The test can refuse an issue (the n-th call of an operation
 * returns an error, nothing issued), fail a request (the n-th request of an
 * operation completes with an error; its partner at the other end with -EREMOTEIO),
 * fail a channel (every request on it, and every later issue), keep the pair
 * unconnected for a number of progress calls, and bound the chunks in flight per
 * channel (-EAGAIN beyond). The clock is virtual (dvx_ht_wait()'s timeouts are
 * counted in progress calls, 1 us each): timeout paths are deterministic. Counters
 * say what the code under test called.
 *
 *	struct dvx_ht_mock a, b;
 *	struct dvx_ht_mock_cfg cfg = { .mode = DVX_HT_CB, .nchannels = 2 };
 *
 *	dvx_ht_mock_pair(&a, &b, &cfg);
 *	my_allreduce_step(&a.ht, &b.ht, ...);	// the algorithm under test
 *	assert_int_equal(a.calls[DVX_HT_MOCK_SEND_CHUNK], 8);
 */
#ifndef DVX_TESTING_HT_MOCK_H
#define DVX_TESTING_HT_MOCK_H

#include <dvx/ht/ht.h>

DVX_BEGIN_DECLS

#define DVX_HT_MOCK_CTRL_SLOTS 8	/* control messages in flight per end */
#define DVX_HT_MOCK_CTRL_BYTES 256	/* the largest control message */

/** enum dvx_ht_mock_op - the operations the mock counts and can fail. */
enum dvx_ht_mock_op {
	DVX_HT_MOCK_SEND_CTRL = 0,
	DVX_HT_MOCK_RECV_CTRL,
	DVX_HT_MOCK_SEND_CHUNK,
	DVX_HT_MOCK_RECV_CHUNK,
	DVX_HT_MOCK_PROGRESS,
	DVX_HT_MOCK_EXPORT,
	DVX_HT_MOCK_IMPORT,
	DVX_HT_MOCK_OP_COUNT,
};

/**
 * struct dvx_ht_mock_cfg - the pair's shape. Zero means the default.
 * @mode:	DVX_HT_ZC or DVX_HT_CB (default DVX_HT_CB); zero-copy ends export and
 *		import buffers, and their chunk sends must name them
 * @nchannels:	1 ... DVX_HT_MAX_CHANNELS (default 1)
 * @max_ctrl:	up to DVX_HT_MOCK_CTRL_BYTES (default DVX_HT_MOCK_CTRL_BYTES)
 * @max_chunk:	the largest chunk (default 65536)
 * @depth:	chunk sends in flight per channel before -EAGAIN (default 8)
 * @delay:	progress calls between a match and its copy (0: the next one)
 * @connect_after: progress calls before the pair is connected (0: at once)
 * @rank_a, @rank_b: the ends' ranks (their peers' are the other's)
 */
struct dvx_ht_mock_cfg {
	uint32_t mode;
	uint32_t nchannels;
	uint32_t max_ctrl;
	uint32_t depth;
	uint64_t max_chunk;
	uint32_t delay;
	uint32_t connect_after;
	int32_t rank_a;
	int32_t rank_b;
};

/**
 * struct dvx_ht_mock - one end: pass &m->ht to the code under test. The counters are
 * the test's to read; the rest is the mock's.
 * @ht:		the interface
 * @peer:	the other end
 * @cfg:	the pair's shape (defaults filled in)
 * @calls:	calls of each enum dvx_ht_mock_op made on this end
 * @bytes_sent:	chunk bytes delivered from this end
 * @ticks:	progress calls of the pair (the virtual clock, in microseconds)
 * @fail_call, @fail_call_nth, @fail_call_err: dvx_ht_mock_fail_call()
 * @fail_req, @fail_req_nth, @fail_req_err: dvx_ht_mock_fail_req()
 * @ch_err:	per channel: the error dvx_ht_mock_fail_channel() set
 * @sq, @rq:	per channel: chunk sends and receives not yet matched (head, tail)
 * @csq, @crq:	control sends and receives not yet matched (head, tail)
 * @inflight:	per channel: chunk sends not yet delivered
 * @ctrl_busy:	control slots in use
 * @seq:	per channel: chunks issued each way ([0] sends, [1] receives)
 * @cseq:	control messages issued each way
 * @reqs:	requests issued per operation (for dvx_ht_mock_fail_req())
 * @ctrl:	the control slots
 */
struct dvx_ht_mock {
	struct dvx_ht ht;
	struct dvx_ht_mock *peer;
	struct dvx_ht_mock_cfg cfg;
	uint64_t calls[DVX_HT_MOCK_OP_COUNT];
	uint64_t bytes_sent;
	uint64_t *ticks;
	uint32_t fail_call, fail_call_nth;
	int32_t fail_call_err;
	uint32_t fail_req, fail_req_nth;
	int32_t fail_req_err;
	int32_t ch_err[DVX_HT_MAX_CHANNELS];
	struct dvx_ht_req *sq[DVX_HT_MAX_CHANNELS][2], *rq[DVX_HT_MAX_CHANNELS][2];
	struct dvx_ht_req *csq[2], *crq[2];
	uint32_t inflight[DVX_HT_MAX_CHANNELS];
	uint32_t ctrl_busy;
	uint64_t seq[DVX_HT_MAX_CHANNELS][2];
	uint64_t cseq[2];
	uint64_t reqs[DVX_HT_MOCK_OP_COUNT];
	uint64_t tick_store;
	uint8_t ctrl[DVX_HT_MOCK_CTRL_SLOTS][DVX_HT_MOCK_CTRL_BYTES];
};

/**
 * dvx_ht_mock_pair() - make two linked ends.
 * @a, @b:	caller storage (overwritten); they share @a's clock, so neither may
 *		move while the pair is in use
 * @cfg:	the shape, NULL for the defaults
 * Context: a test. Return: 0; -EINVAL (a bad shape, NULL ends).
 */
int dvx_ht_mock_pair(struct dvx_ht_mock *a, struct dvx_ht_mock *b,
		     const struct dvx_ht_mock_cfg *cfg);

/**
 * dvx_ht_mock_fail_call() - the @nth call (1 = the next) of @op on @m, counted from
 * now, returns @err and issues nothing; @nth 0 disarms.
 * @m:		an end
 * @op:		enum dvx_ht_mock_op (not DVX_HT_MOCK_PROGRESS)
 * @nth:	which call
 * @err:	a negative errno
 * Context: a test. Return: nothing.
 */
void dvx_ht_mock_fail_call(struct dvx_ht_mock *m, uint32_t op, uint32_t nth, int err);

/**
 * dvx_ht_mock_fail_req() - the @nth request (1 = the next) that @op issues on @m,
 * counted from now, completes with @err; the request it is matched with at the other
 * end (if any) completes with -EREMOTEIO. @nth 0 disarms.
 * @m:		an end
 * @op:		DVX_HT_MOCK_SEND_CTRL ... DVX_HT_MOCK_RECV_CHUNK
 * @nth:	which request
 * @err:	a negative errno
 * Context: a test. Return: nothing.
 */
void dvx_ht_mock_fail_req(struct dvx_ht_mock *m, uint32_t op, uint32_t nth, int err);

/**
 * dvx_ht_mock_fail_channel() - fail a channel of @m's end: its requests in flight
 * complete with @err, later issues on it return @err, dvx_ht_status() reports it
 * (as an error completion does on the IB transport).
 * @m:		an end
 * @channel:	the channel
 * @err:	a negative errno
 * Context: a test. Return: nothing.
 */
void dvx_ht_mock_fail_channel(struct dvx_ht_mock *m, uint32_t channel, int err);

DVX_END_DECLS

#endif /* DVX_TESTING_HT_MOCK_H */
