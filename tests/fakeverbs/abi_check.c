/* libcore/rdma/verbs_abi.h against rdma-core's own headers (tests/cli/test_verbs_abi.sh compiles this where
 * <infiniband/verbs.h> and <rdma/rdma_cma.h> exist). Every field offset, structure size, value and
 * entry-point signature gpup2p declares must be rdma-core's, or this file does not compile; each
 * _Static_assert names what differs. gcc or clang (__builtin_types_compatible_p, __typeof__). */
#include <stdio.h>

#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

#include "rdma/verbs_abi.h"

/* verbs.h turns ibv_query_port and ibv_reg_mr into macros over inline helpers: gpup2p binds the
 * exported symbols underneath (the compat ibv_query_port fills the fields it knows). */
#undef ibv_query_port
#undef ibv_reg_mr

#define VALUE(name, v) _Static_assert((long long)GP_##name == (long long)(name), "GP_" #name " differs: " #name);
GP_IBV_VALUES(VALUE)

#define SAME(a, b) __builtin_types_compatible_p(a, b)
#define OFF(mine, theirs, f) \
	_Static_assert(offsetof(struct mine, f) == offsetof(struct theirs, f), #mine "." #f ": offset differs"); \
	_Static_assert(sizeof(((struct mine *)0)->f) == sizeof(((struct theirs *)0)->f), #mine "." #f ": size differs");
#define STRUCT(mine, theirs, FIELDS) \
	_Static_assert(sizeof(struct mine) == sizeof(struct theirs), #mine ": size differs from " #theirs); \
	_Static_assert(_Alignof(struct mine) == _Alignof(struct theirs), #mine ": alignment differs");
#define O_port(f) OFF(gp_ibv_port_attr, ibv_port_attr, f)
#define O_dev(f) OFF(gp_ibv_device_attr, ibv_device_attr, f)
#define O_gide(f) OFF(gp_ibv_gid_entry, ibv_gid_entry, f)
#define O_ops(f) OFF(gp_ibv_context_ops, ibv_context_ops, f)
#define O_ctx(f) OFF(gp_ibv_context, ibv_context, f)
#define O_mr(f) OFF(gp_ibv_mr, ibv_mr, f)
#define O_cq(f) OFF(gp_ibv_cq, ibv_cq, f)
#define O_qp(f) OFF(gp_ibv_qp, ibv_qp, f)
#define O_qpi(f) OFF(gp_ibv_qp_init_attr, ibv_qp_init_attr, f)
#define O_ah(f) OFF(gp_ibv_ah_attr, ibv_ah_attr, f)
#define O_qpa(f) OFF(gp_ibv_qp_attr, ibv_qp_attr, f)
#define O_swr(f) OFF(gp_ibv_send_wr, ibv_send_wr, f)
#define O_rwr(f) OFF(gp_ibv_recv_wr, ibv_recv_wr, f)
#define O_wc(f) OFF(gp_ibv_wc, ibv_wc, f)
#define O_cmid(f) OFF(gp_rdma_cm_id, rdma_cm_id, f)
#define O_conn(f) OFF(gp_rdma_conn_param, rdma_conn_param, f)
#define O_ev(f) OFF(gp_rdma_cm_event, rdma_cm_event, f)
GP_IBV_PORT_ATTR_FIELDS(O_port)
_Static_assert(sizeof(struct gp_ibv_port_attr) <= sizeof(struct ibv_port_attr), "gp_ibv_port_attr: larger than ibv_port_attr");
GP_IBV_DEVICE_ATTR_FIELDS(O_dev)
STRUCT(gp_ibv_device_attr, ibv_device_attr, )
GP_IBV_GID_ENTRY_FIELDS(O_gide)
STRUCT(gp_ibv_gid_entry, ibv_gid_entry, )
GP_IBV_CONTEXT_OPS_FIELDS(O_ops)
STRUCT(gp_ibv_context_ops, ibv_context_ops, )
GP_IBV_CONTEXT_FIELDS(O_ctx)
STRUCT(gp_ibv_context, ibv_context, )
GP_IBV_MR_FIELDS(O_mr)
STRUCT(gp_ibv_mr, ibv_mr, )
GP_IBV_CQ_FIELDS(O_cq)
STRUCT(gp_ibv_cq, ibv_cq, )
GP_IBV_QP_FIELDS(O_qp)
STRUCT(gp_ibv_qp, ibv_qp, )
GP_IBV_QP_INIT_ATTR_FIELDS(O_qpi)
STRUCT(gp_ibv_qp_init_attr, ibv_qp_init_attr, )
GP_IBV_AH_ATTR_FIELDS(O_ah)
STRUCT(gp_ibv_ah_attr, ibv_ah_attr, )
GP_IBV_QP_ATTR_FIELDS(O_qpa)
STRUCT(gp_ibv_qp_attr, ibv_qp_attr, )
GP_IBV_SEND_WR_FIELDS(O_swr)
STRUCT(gp_ibv_send_wr, ibv_send_wr, )
GP_IBV_RECV_WR_FIELDS(O_rwr)
STRUCT(gp_ibv_recv_wr, ibv_recv_wr, )
STRUCT(gp_ibv_sge, ibv_sge, )
GP_IBV_WC_FIELDS(O_wc)
STRUCT(gp_ibv_wc, ibv_wc, )
STRUCT(gp_rdma_event_channel, rdma_event_channel, )
_Static_assert(offsetof(struct gp_rdma_event_channel, fd) == offsetof(struct rdma_event_channel, fd), "channel fd");
GP_RDMA_CM_ID_FIELDS(O_cmid)
STRUCT(gp_rdma_cm_id, rdma_cm_id, )
GP_RDMA_CONN_PARAM_FIELDS(O_conn)
STRUCT(gp_rdma_conn_param, rdma_conn_param, )
GP_RDMA_CM_EVENT_FIELDS(O_ev)
STRUCT(gp_rdma_cm_event, rdma_cm_event, )

/* Signatures: each of gpup2p's function types, with its own structures replaced by rdma-core's, must be
 * the type of rdma-core's declaration. */
#define gp_ibv_device ibv_device
#define gp_ibv_context ibv_context
#define gp_ibv_device_attr ibv_device_attr
#define gp_ibv_pd ibv_pd
#define gp_ibv_mr ibv_mr
#define gp_ibv_cq ibv_cq
#define gp_ibv_comp_channel ibv_comp_channel
#define gp_ibv_qp ibv_qp
#define gp_ibv_qp_init_attr ibv_qp_init_attr
#define gp_ibv_qp_attr ibv_qp_attr
#define gp_ibv_gid_entry ibv_gid_entry
#define gp_ibv_gid ibv_gid
#define gp_rdma_event_channel rdma_event_channel
#define gp_rdma_cm_id rdma_cm_id
#define gp_rdma_conn_param rdma_conn_param
#define gp_rdma_cm_event rdma_cm_event
#define gp_ibv_wc_status enum ibv_wc_status
#define gp_rdma_port_space enum rdma_port_space
#define gp_rdma_cm_event_type enum rdma_cm_event_type
/* the compat ibv_query_port takes struct _compat_ibv_port_attr *, a prefix of struct ibv_port_attr */
#define gp_ibv_port_attr _compat_ibv_port_attr
#define SIG(name, ver, ret, args) \
	_Static_assert(SAME(ret(*) args, __typeof__(&name)), #name ": signature differs from rdma-core's");
GP_IBV_FUNCS(SIG)
GP_RDMACM_FUNCS(SIG)
#undef gp_ibv_port_attr
/* the optional ones: ibv_reg_dmabuf_mr and _ibv_query_gid_ex */
GP_IBV_FUNCS_OPTIONAL(SIG)

int main(void)
{
	printf("%zu structures, %d values\n", (size_t)18, 0
#define ONE(n, v) + 1
	       GP_IBV_VALUES(ONE));
	return 0;
}
