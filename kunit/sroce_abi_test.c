// SPDX-License-Identifier: GPL-2.0
/*
 * The user/kernel ABI as a contract: every size, offset and alignment of
 * uapi/rdma/sroce-abi.h is pinned here. A change that moves a field fails
 * this suite; a deliberate change bumps the ABI and this table together.
 */
#include <kunit/test.h>
#include <linux/stddef.h>
#include <rdma/sroce-abi.h>

static void sroce_abi_version_test(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, SROCE_UVERBS_ABI_VERSION, 1);
}

static void sroce_abi_ucontext_test(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, sizeof(struct sroce_alloc_ucontext_req), 16);
	KUNIT_EXPECT_EQ(test, __alignof__(struct sroce_alloc_ucontext_req), 8);
	KUNIT_EXPECT_EQ(test, offsetof(struct sroce_alloc_ucontext_req, comp_mask), 0);
	KUNIT_EXPECT_EQ(test, sizeof_field(struct sroce_alloc_ucontext_req, comp_mask), 4);
	KUNIT_EXPECT_EQ(test, offsetof(struct sroce_alloc_ucontext_req, reserved_20), 4);
	KUNIT_EXPECT_EQ(test, sizeof_field(struct sroce_alloc_ucontext_req, reserved_20), 4);
	KUNIT_EXPECT_EQ(test, offsetof(struct sroce_alloc_ucontext_req, provider_caps), 8);
	KUNIT_EXPECT_EQ(test, sizeof_field(struct sroce_alloc_ucontext_req, provider_caps), 8);

	KUNIT_EXPECT_EQ(test, sizeof(struct sroce_alloc_ucontext_resp), 40);
	KUNIT_EXPECT_EQ(test, __alignof__(struct sroce_alloc_ucontext_resp), 8);
	KUNIT_EXPECT_EQ(test, offsetof(struct sroce_alloc_ucontext_resp, comp_mask), 0);
	KUNIT_EXPECT_EQ(test, sizeof_field(struct sroce_alloc_ucontext_resp, comp_mask), 4);
	KUNIT_EXPECT_EQ(test, offsetof(struct sroce_alloc_ucontext_resp, abi_version), 4);
	KUNIT_EXPECT_EQ(test, sizeof_field(struct sroce_alloc_ucontext_resp, abi_version), 4);
	KUNIT_EXPECT_EQ(test, offsetof(struct sroce_alloc_ucontext_resp, kernel_caps), 8);
	KUNIT_EXPECT_EQ(test, sizeof_field(struct sroce_alloc_ucontext_resp, kernel_caps), 8);
	KUNIT_EXPECT_EQ(test, offsetof(struct sroce_alloc_ucontext_resp, required_caps), 16);
	KUNIT_EXPECT_EQ(test, sizeof_field(struct sroce_alloc_ucontext_resp, required_caps), 8);
}

/*
 * The PD response follows the 4-byte core response directly, so it must
 * stay 4-byte aligned and a multiple of 8 bytes long.
 */
static void sroce_abi_pd_test(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, sizeof(struct sroce_alloc_pd_resp), 8);
	KUNIT_EXPECT_EQ(test, __alignof__(struct sroce_alloc_pd_resp), 4);
	KUNIT_EXPECT_EQ(test, offsetof(struct sroce_alloc_pd_resp, comp_mask), 0);
	KUNIT_EXPECT_EQ(test, sizeof_field(struct sroce_alloc_pd_resp, comp_mask), 4);
	KUNIT_EXPECT_EQ(test, offsetof(struct sroce_alloc_pd_resp, pdn), 4);
	KUNIT_EXPECT_EQ(test, sizeof_field(struct sroce_alloc_pd_resp, pdn), 4);
}

/* The QP request follows the core command, which is 8-byte aligned. */
static void sroce_abi_create_qp_req_test(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, sizeof(struct sroce_create_qp_req), 8);
	KUNIT_EXPECT_EQ(test, offsetof(struct sroce_create_qp_req, comp_mask), 0);
	KUNIT_EXPECT_EQ(test, sizeof_field(struct sroce_create_qp_req, comp_mask), 4);
	KUNIT_EXPECT_EQ(test, offsetof(struct sroce_create_qp_req, kick_fd), 4);
	KUNIT_EXPECT_EQ(test, sizeof_field(struct sroce_create_qp_req, kick_fd), 4);
	KUNIT_EXPECT_EQ(test, SROCE_CREATE_QP_REQ_KICK_FD, 1);
	KUNIT_EXPECT_EQ(test, SROCE_UCONTEXT_CAP_KICK_EVENTFD, 2);
	KUNIT_EXPECT_EQ(test, SROCE_UCONTEXT_CAP_ATOMIC_WRITE, 4);
}

static void sroce_abi_srq_test(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, sizeof(struct sroce_create_srq_resp), 24);
	KUNIT_EXPECT_EQ(test, offsetof(struct sroce_create_srq_resp, mmap_offset), 8);
	KUNIT_EXPECT_EQ(test, offsetof(struct sroce_create_srq_resp, mmap_len), 16);
	KUNIT_EXPECT_EQ(test, offsetof(struct sroce_create_srq_resp, log_slots), 20);
	KUNIT_EXPECT_EQ(test, offsetof(struct sroce_create_srq_resp, log_slot_size), 21);
	KUNIT_EXPECT_EQ(test, sizeof(struct sroce_modify_srq_req), 16);
	KUNIT_EXPECT_EQ(test, offsetof(struct sroce_modify_srq_req, resp_addr), 8);
}

/* The opcodes a ring carries, and the REG_MR segment in place of raddr. */
static void sroce_abi_wqe_opcode_test(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, SROCE_WQE_LOCAL_INV, 7);
	KUNIT_EXPECT_EQ(test, SROCE_WQE_SEND_INV, 8);
	KUNIT_EXPECT_EQ(test, SROCE_WQE_REG_MR, 9);
	KUNIT_EXPECT_EQ(test, SROCE_WQE_BIND_MW, 10);
	KUNIT_EXPECT_EQ(test, SROCE_WQE_ATOMIC_WRITE, 11);
	KUNIT_EXPECT_EQ(test, offsetof(struct sroce_wqe_bind, mr_key), 24);
	KUNIT_EXPECT_EQ(test, offsetof(struct sroce_send_wqe, bind), 32);
	KUNIT_EXPECT_EQ(test, sizeof(struct sroce_wqe_reg), 32);
	KUNIT_EXPECT_EQ(test, offsetof(struct sroce_wqe_reg, key), 16);
	KUNIT_EXPECT_EQ(test, offsetof(struct sroce_wqe_reg, page_size), 24);
	KUNIT_EXPECT_EQ(test, offsetof(struct sroce_send_wqe, reg), 32);
}

static struct kunit_case sroce_abi_cases[] = {
	KUNIT_CASE(sroce_abi_srq_test),
	KUNIT_CASE(sroce_abi_wqe_opcode_test),
	KUNIT_CASE(sroce_abi_create_qp_req_test),
	KUNIT_CASE(sroce_abi_version_test),
	KUNIT_CASE(sroce_abi_ucontext_test),
	KUNIT_CASE(sroce_abi_pd_test),
	{}
};

static struct kunit_suite sroce_abi_suite = {
	.name = "sroce_abi",
	.test_cases = sroce_abi_cases,
};

kunit_test_suite(sroce_abi_suite);

MODULE_LICENSE("GPL");
