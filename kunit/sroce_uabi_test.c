// SPDX-License-Identifier: GPL-2.0
/*
 * Validation of user ABI requests (include/sroce/uabi.h).
 */
#include <kunit/test.h>
#include <sroce/uabi.h>

static void sroce_uabi_zero_request_test(struct kunit *test)
{
	struct sroce_alloc_ucontext_req req = {};

	/* An old provider that sent nothing is zero-filled and accepted. */
	KUNIT_EXPECT_EQ(test, sroce_uabi_check_ucontext_req(&req, 0), 0);
}

static void sroce_uabi_comp_mask_test(struct kunit *test)
{
	struct sroce_alloc_ucontext_req req = {};
	int bit;

	for (bit = 0; bit < 32; bit++) {
		req.comp_mask = 1U << bit;
		KUNIT_EXPECT_EQ_MSG(test, sroce_uabi_check_ucontext_req(&req, 0),
				    -EINVAL, "comp_mask bit %d", bit);
	}
}

static void sroce_uabi_reserved_test(struct kunit *test)
{
	struct sroce_alloc_ucontext_req req = {};
	int i;

	for (i = 0; i < sizeof(req.reserved_20); i++) {
		memset(&req, 0, sizeof(req));
		req.reserved_20[i] = 0x80;
		KUNIT_EXPECT_EQ_MSG(test, sroce_uabi_check_ucontext_req(&req, 0),
				    -EINVAL, "reserved byte %d", i);
	}
}

static void sroce_uabi_caps_test(struct kunit *test)
{
	struct sroce_alloc_ucontext_req req = {};

	/* A provider may know caps this kernel does not. */
	req.provider_caps = ~0ULL;
	KUNIT_EXPECT_EQ(test, sroce_uabi_check_ucontext_req(&req, 0), 0);

	/* A kernel that requires a cap refuses providers lacking it. */
	req.provider_caps = 0x1;
	KUNIT_EXPECT_EQ(test, sroce_uabi_check_ucontext_req(&req, 0x3),
			-EPROTO);
	req.provider_caps = 0x7;
	KUNIT_EXPECT_EQ(test, sroce_uabi_check_ucontext_req(&req, 0x3), 0);
}

static void sroce_uabi_resp_test(struct kunit *test)
{
	struct sroce_alloc_ucontext_resp resp;

	memset(&resp, 0xa5, sizeof(resp));
	sroce_uabi_fill_ucontext_resp(&resp);
	KUNIT_EXPECT_EQ(test, resp.comp_mask, 0);
	KUNIT_EXPECT_EQ(test, resp.abi_version, SROCE_UVERBS_ABI_VERSION);
	/*
	 * The ABI's promise: UD/UC, the kick eventfd and ATOMIC_WRITE,
	 * nothing required.
	 */
	KUNIT_EXPECT_EQ(test, resp.kernel_caps,
			(u64)(SROCE_UCONTEXT_CAP_UD_UC |
			      SROCE_UCONTEXT_CAP_KICK_EVENTFD |
			      SROCE_UCONTEXT_CAP_ATOMIC_WRITE));
	KUNIT_EXPECT_EQ(test, resp.required_caps, 0);
	/* What the kernel requires it must also offer and know. */
	KUNIT_EXPECT_EQ(test, SROCE_UCONTEXT_CAPS_REQUIRED &
			~SROCE_UCONTEXT_CAPS_OFFERED, 0);
	KUNIT_EXPECT_EQ(test, SROCE_UCONTEXT_CAPS_OFFERED &
			~SROCE_UCONTEXT_CAPS_KNOWN, 0);
}

static void sroce_uabi_mem_is_zero_test(struct kunit *test)
{
	u8 buf[33] = {};

	KUNIT_EXPECT_TRUE(test, sroce_uabi_mem_is_zero(buf, sizeof(buf)));
	KUNIT_EXPECT_TRUE(test, sroce_uabi_mem_is_zero(buf, 0));
	buf[32] = 1;
	KUNIT_EXPECT_FALSE(test, sroce_uabi_mem_is_zero(buf, sizeof(buf)));
	KUNIT_EXPECT_TRUE(test, sroce_uabi_mem_is_zero(buf, 32));
}

static void sroce_uabi_create_qp_req_test(struct kunit *test)
{
	struct sroce_create_qp_req req = {};
	unsigned int bit;

	KUNIT_EXPECT_EQ(test, sroce_uabi_check_create_qp_req(&req), 0);
	req.kick_fd = 3;
	KUNIT_EXPECT_EQ(test, sroce_uabi_check_create_qp_req(&req), -EINVAL);
	req.comp_mask = SROCE_CREATE_QP_REQ_KICK_FD;
	KUNIT_EXPECT_EQ(test, sroce_uabi_check_create_qp_req(&req), 0);
	req.kick_fd = 0;
	KUNIT_EXPECT_EQ(test, sroce_uabi_check_create_qp_req(&req), 0);
	req.kick_fd = -1;
	KUNIT_EXPECT_EQ(test, sroce_uabi_check_create_qp_req(&req), -EBADF);
	req.kick_fd = 3;
	for (bit = 1; bit < 32; bit++) {
		req.comp_mask = SROCE_CREATE_QP_REQ_KICK_FD | 1U << bit;
		KUNIT_EXPECT_EQ_MSG(test, sroce_uabi_check_create_qp_req(&req),
				    -EINVAL, "comp_mask bit %u", bit);
	}
}

static struct kunit_case sroce_uabi_cases[] = {
	KUNIT_CASE(sroce_uabi_create_qp_req_test),
	KUNIT_CASE(sroce_uabi_zero_request_test),
	KUNIT_CASE(sroce_uabi_comp_mask_test),
	KUNIT_CASE(sroce_uabi_reserved_test),
	KUNIT_CASE(sroce_uabi_caps_test),
	KUNIT_CASE(sroce_uabi_resp_test),
	KUNIT_CASE(sroce_uabi_mem_is_zero_test),
	{}
};

static struct kunit_suite sroce_uabi_suite = {
	.name = "sroce_uabi",
	.test_cases = sroce_uabi_cases,
};

kunit_test_suite(sroce_uabi_suite);
