/* gpup2p — the part of the libibverbs and librdmacm ABI that gpup2p uses (not installed). Both libraries
 * are loaded with dlopen at run time, so the build needs no rdma-core header: the structures whose
 * fields gpup2p reads or writes are declared here with rdma-core's field names and a gp_ prefix on the
 * tag (struct gp_ibv_qp is verbs.h's struct ibv_qp). Fields gpup2p never touches are padding of the
 * same size. tests/fakeverbs/abi_check.c compiles this header against the real verbs.h and rdma_cma.h,
 * when present, and fails on any offset, size, value or signature that differs. Linux, LP64. */
#ifndef GPUP2P_VERBS_ABI_H
#define GPUP2P_VERBS_ABI_H

#include <netinet/in.h>
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

/* Values gpup2p passes or compares: X(verbs.h name, value) makes GP_<name>. */
#define GP_IBV_VALUES(X) \
	X(IBV_QPT_RC, 2) \
	X(IBV_QPS_RESET, 0) X(IBV_QPS_INIT, 1) X(IBV_QPS_RTR, 2) X(IBV_QPS_RTS, 3) \
	X(IBV_QP_STATE, 1 << 0) X(IBV_QP_ACCESS_FLAGS, 1 << 3) X(IBV_QP_PKEY_INDEX, 1 << 4) \
	X(IBV_QP_PORT, 1 << 5) X(IBV_QP_AV, 1 << 7) X(IBV_QP_PATH_MTU, 1 << 8) X(IBV_QP_TIMEOUT, 1 << 9) \
	X(IBV_QP_RETRY_CNT, 1 << 10) X(IBV_QP_RNR_RETRY, 1 << 11) X(IBV_QP_RQ_PSN, 1 << 12) \
	X(IBV_QP_MAX_QP_RD_ATOMIC, 1 << 13) X(IBV_QP_MIN_RNR_TIMER, 1 << 15) X(IBV_QP_SQ_PSN, 1 << 16) \
	X(IBV_QP_MAX_DEST_RD_ATOMIC, 1 << 17) X(IBV_QP_DEST_QPN, 1 << 20) \
	X(IBV_ACCESS_LOCAL_WRITE, 1) X(IBV_ACCESS_REMOTE_WRITE, 2) X(IBV_ACCESS_REMOTE_READ, 4) \
	X(IBV_WR_RDMA_WRITE, 0) X(IBV_WR_RDMA_WRITE_WITH_IMM, 1) X(IBV_WR_SEND, 2) X(IBV_WR_RDMA_READ, 4) \
	X(IBV_SEND_SIGNALED, 2) \
	X(IBV_WC_SUCCESS, 0) X(IBV_WC_RECV, 128) X(IBV_WC_RECV_RDMA_WITH_IMM, 129) \
	X(IBV_PORT_DOWN, 1) X(IBV_PORT_INIT, 2) X(IBV_PORT_ARMED, 3) X(IBV_PORT_ACTIVE, 4) \
	X(IBV_PORT_ACTIVE_DEFER, 5) \
	X(IBV_MTU_256, 1) X(IBV_MTU_4096, 5) \
	X(IBV_LINK_LAYER_UNSPECIFIED, 0) X(IBV_LINK_LAYER_INFINIBAND, 1) X(IBV_LINK_LAYER_ETHERNET, 2) \
	X(IBV_GID_TYPE_IB, 0) X(IBV_GID_TYPE_ROCE_V1, 1) X(IBV_GID_TYPE_ROCE_V2, 2) \
	X(RDMA_PS_TCP, 0x0106) \
	X(RDMA_CM_EVENT_ADDR_RESOLVED, 0) X(RDMA_CM_EVENT_ROUTE_RESOLVED, 2) \
	X(RDMA_CM_EVENT_CONNECT_REQUEST, 4) X(RDMA_CM_EVENT_ESTABLISHED, 9) X(RDMA_CM_EVENT_DISCONNECTED, 10) \
	X(RDMA_CM_EVENT_REJECTED, 8)
#define GP_IBV_ENUMERATOR_(name, value) GP_##name = value,
enum { GP_IBV_VALUES(GP_IBV_ENUMERATOR_) };

/* Enum parameters (an enum of non-negative values is an unsigned int in the Linux C ABI). */
typedef unsigned gp_ibv_wc_status;
typedef unsigned gp_rdma_port_space;
typedef unsigned gp_rdma_cm_event_type;

/* Handles gpup2p only passes back: opaque. */
struct gp_ibv_device;
struct gp_ibv_pd;
struct gp_ibv_comp_channel;

union gp_ibv_gid {
	uint8_t raw[16];
	struct {
		uint64_t subnet_prefix;
		uint64_t interface_id;
	} global;
};

/* struct ibv_port_attr up to port_cap_flags2: what the exported ibv_query_port (the compat entry under
 * verbs.h's inline helper) fills in every rdma-core release; later releases append fields. */
struct gp_ibv_port_attr {
	int state, max_mtu, active_mtu, gid_tbl_len;
	uint32_t port_cap_flags, max_msg_sz, bad_pkey_cntr, qkey_viol_cntr;
	uint16_t pkey_tbl_len, lid, sm_lid;
	uint8_t lmc, max_vl_num, sm_sl, subnet_timeout, init_type_reply, active_width, active_speed, phys_state,
		link_layer, flags;
	uint16_t port_cap_flags2;
};
#define GP_IBV_PORT_ATTR_FIELDS(X) X(state) X(active_mtu) X(lid) X(active_width) X(active_speed) \
	X(phys_state) X(link_layer) X(port_cap_flags2)

/* struct ibv_device_attr: gpup2p reads max_qp_rd_atom and max_qp_init_rd_atom. */
struct gp_ibv_device_attr {
	char fw_ver[64];
	uint64_t node_guid, sys_image_guid, max_mr_size, page_size_cap;
	uint32_t vendor_id, vendor_part_id, hw_ver;
	int max_qp, max_qp_wr;
	unsigned device_cap_flags;
	int max_sge, max_sge_rd, max_cq, max_cqe, max_mr, max_pd, max_qp_rd_atom, max_ee_rd_atom,
	    max_res_rd_atom, max_qp_init_rd_atom;
	int rest_[16];
	uint16_t max_pkeys;
	uint8_t local_ca_ack_delay, phys_port_cnt;
};
#define GP_IBV_DEVICE_ATTR_FIELDS(X) X(fw_ver) X(vendor_id) X(max_qp_wr) X(max_qp_rd_atom) \
	X(max_qp_init_rd_atom) X(max_pkeys) X(phys_port_cnt)

struct gp_ibv_gid_entry {
	union gp_ibv_gid gid;
	uint32_t gid_index, port_num, gid_type, ndev_ifindex;
};
#define GP_IBV_GID_ENTRY_FIELDS(X) X(gid) X(gid_index) X(port_num) X(gid_type) X(ndev_ifindex)

struct gp_ibv_context;
struct gp_ibv_qp;
struct gp_ibv_cq;
struct gp_ibv_send_wr;
struct gp_ibv_recv_wr;
struct gp_ibv_wc;

/* struct ibv_context_ops: the three data-path entries verbs.h's inline ibv_poll_cq, ibv_post_send and
 * ibv_post_recv call through; the other slots are padding. */
struct gp_ibv_context_ops {
	void *slots1_[11];
	int (*poll_cq)(struct gp_ibv_cq *cq, int num_entries, struct gp_ibv_wc *wc);
	void *slots2_[13];
	int (*post_send)(struct gp_ibv_qp *qp, struct gp_ibv_send_wr *wr, struct gp_ibv_send_wr **bad_wr);
	int (*post_recv)(struct gp_ibv_qp *qp, struct gp_ibv_recv_wr *wr, struct gp_ibv_recv_wr **bad_wr);
	void *slots3_[5];
};
#define GP_IBV_CONTEXT_OPS_FIELDS(X) X(poll_cq) X(post_send) X(post_recv)

struct gp_ibv_context {
	struct gp_ibv_device *device;
	struct gp_ibv_context_ops ops;
	int cmd_fd, async_fd, num_comp_vectors;
	pthread_mutex_t mutex;
	void *abi_compat;
};
#define GP_IBV_CONTEXT_FIELDS(X) X(device) X(ops) X(cmd_fd) X(abi_compat)

struct gp_ibv_mr {
	struct gp_ibv_context *context;
	struct gp_ibv_pd *pd;
	void *addr;
	size_t length;
	uint32_t handle, lkey, rkey;
};
#define GP_IBV_MR_FIELDS(X) X(context) X(pd) X(addr) X(length) X(handle) X(lkey) X(rkey)

struct gp_ibv_cq {
	struct gp_ibv_context *context;
	struct gp_ibv_comp_channel *channel;
	void *cq_context;
	uint32_t handle;
	int cqe;
	pthread_mutex_t mutex;
	pthread_cond_t cond;
	uint32_t comp_events_completed, async_events_completed;
};
#define GP_IBV_CQ_FIELDS(X) X(context) X(cqe) X(async_events_completed)

struct gp_ibv_qp {
	struct gp_ibv_context *context;
	void *qp_context;
	struct gp_ibv_pd *pd;
	struct gp_ibv_cq *send_cq, *recv_cq;
	void *srq;
	uint32_t handle, qp_num;
	int state, qp_type;
	pthread_mutex_t mutex;
	pthread_cond_t cond;
	uint32_t events_completed;
};
#define GP_IBV_QP_FIELDS(X) X(context) X(pd) X(send_cq) X(recv_cq) X(qp_num) X(state) X(events_completed)

struct gp_ibv_qp_cap {
	uint32_t max_send_wr, max_recv_wr, max_send_sge, max_recv_sge, max_inline_data;
};

struct gp_ibv_qp_init_attr {
	void *qp_context;
	struct gp_ibv_cq *send_cq, *recv_cq;
	void *srq;
	struct gp_ibv_qp_cap cap;
	int qp_type, sq_sig_all;
};
#define GP_IBV_QP_INIT_ATTR_FIELDS(X) X(send_cq) X(recv_cq) X(cap) X(qp_type) X(sq_sig_all)

struct gp_ibv_global_route {
	union gp_ibv_gid dgid;
	uint32_t flow_label;
	uint8_t sgid_index, hop_limit, traffic_class;
};

struct gp_ibv_ah_attr {
	struct gp_ibv_global_route grh;
	uint16_t dlid;
	uint8_t sl, src_path_bits, static_rate, is_global, port_num;
};
#define GP_IBV_AH_ATTR_FIELDS(X) X(grh) X(dlid) X(sl) X(is_global) X(port_num)

struct gp_ibv_qp_attr {
	int qp_state, cur_qp_state, path_mtu, path_mig_state;
	uint32_t qkey, rq_psn, sq_psn, dest_qp_num;
	unsigned qp_access_flags;
	struct gp_ibv_qp_cap cap;
	struct gp_ibv_ah_attr ah_attr, alt_ah_attr;
	uint16_t pkey_index, alt_pkey_index;
	uint8_t en_sqd_async_notify, sq_draining, max_rd_atomic, max_dest_rd_atomic, min_rnr_timer, port_num,
		timeout, retry_cnt, rnr_retry, alt_port_num, alt_timeout;
	uint32_t rate_limit;
};
#define GP_IBV_QP_ATTR_FIELDS(X) X(qp_state) X(path_mtu) X(rq_psn) X(sq_psn) X(dest_qp_num) \
	X(qp_access_flags) X(ah_attr) X(pkey_index) X(max_rd_atomic) X(max_dest_rd_atomic) X(min_rnr_timer) \
	X(port_num) X(timeout) X(retry_cnt) X(rnr_retry) X(rate_limit)

struct gp_ibv_sge {
	uint64_t addr;
	uint32_t length, lkey;
};

struct gp_ibv_send_wr {
	uint64_t wr_id;
	struct gp_ibv_send_wr *next;
	struct gp_ibv_sge *sg_list;
	int num_sge, opcode;
	unsigned send_flags;
	uint32_t imm_data;             /* network byte order */
	union {
		struct {
			uint64_t remote_addr;
			uint32_t rkey;
		} rdma;
		uint64_t atomic_[4];
	} wr;
	uint32_t qp_type_;
	uint64_t bind_mw_[6];          /* the bind_mw / tso union */
};
#define GP_IBV_SEND_WR_FIELDS(X) X(wr_id) X(next) X(sg_list) X(num_sge) X(opcode) X(send_flags) X(imm_data) \
	X(wr.rdma.remote_addr) X(wr.rdma.rkey)

struct gp_ibv_recv_wr {
	uint64_t wr_id;
	struct gp_ibv_recv_wr *next;
	struct gp_ibv_sge *sg_list;
	int num_sge;
};
#define GP_IBV_RECV_WR_FIELDS(X) X(wr_id) X(next) X(sg_list) X(num_sge)

struct gp_ibv_wc {
	uint64_t wr_id;
	int status, opcode;
	uint32_t vendor_err, byte_len, imm_data, qp_num, src_qp;
	unsigned wc_flags;
	uint16_t pkey_index, slid;
	uint8_t sl, dlid_path_bits;
};
#define GP_IBV_WC_FIELDS(X) X(wr_id) X(status) X(opcode) X(vendor_err) X(byte_len) X(imm_data) X(qp_num) \
	X(wc_flags) X(dlid_path_bits)

/* librdmacm (rdma_cma.h): struct rdma_event_channel, rdma_cm_id, rdma_conn_param, rdma_cm_event. */
struct gp_rdma_event_channel {
	int fd;
};

struct gp_rdma_addr {
	union {
		struct sockaddr src_addr;
		struct sockaddr_storage src_storage;
	};
	union {
		struct sockaddr dst_addr;
		struct sockaddr_storage dst_storage;
	};
	struct {
		union gp_ibv_gid sgid, dgid;
		uint16_t pkey;
	} ibaddr;
};

struct gp_rdma_cm_id {
	struct gp_ibv_context *verbs;
	struct gp_rdma_event_channel *channel;
	void *context;
	struct gp_ibv_qp *qp;
	struct {
		struct gp_rdma_addr addr;
		void *path_rec;
		int num_paths;
	} route;
	int ps;
	uint8_t port_num;
	void *event, *send_cq_channel, *send_cq, *recv_cq_channel, *recv_cq, *srq;
	struct gp_ibv_pd *pd;
	int qp_type;
};
#define GP_RDMA_CM_ID_FIELDS(X) X(verbs) X(channel) X(qp) X(route) X(ps) X(port_num) X(pd) X(qp_type)

struct gp_rdma_conn_param {
	const void *private_data;
	uint8_t private_data_len, responder_resources, initiator_depth, flow_control, retry_count,
		rnr_retry_count, srq;
	uint32_t qp_num;
};
#define GP_RDMA_CONN_PARAM_FIELDS(X) X(private_data) X(private_data_len) X(responder_resources) \
	X(initiator_depth) X(retry_count) X(rnr_retry_count) X(qp_num)

struct gp_rdma_cm_event {
	struct gp_rdma_cm_id *id, *listen_id;
	int event, status;
	union {
		struct gp_rdma_conn_param conn;
		uint64_t ud_[7];
	} param;
};
#define GP_RDMA_CM_EVENT_FIELDS(X) X(id) X(listen_id) X(event) X(status) X(param.conn)

/* libibverbs entry points: X(name, symbol version, return type, parameters). */
#define GP_IBV_FUNCS(X) \
	X(ibv_get_device_list, "IBVERBS_1.1", struct gp_ibv_device **, (int *)) \
	X(ibv_free_device_list, "IBVERBS_1.1", void, (struct gp_ibv_device **)) \
	X(ibv_get_device_name, "IBVERBS_1.1", const char *, (struct gp_ibv_device *)) \
	X(ibv_open_device, "IBVERBS_1.1", struct gp_ibv_context *, (struct gp_ibv_device *)) \
	X(ibv_close_device, "IBVERBS_1.1", int, (struct gp_ibv_context *)) \
	X(ibv_query_device, "IBVERBS_1.1", int, (struct gp_ibv_context *, struct gp_ibv_device_attr *)) \
	X(ibv_query_port, "IBVERBS_1.1", int, (struct gp_ibv_context *, uint8_t, struct gp_ibv_port_attr *)) \
	X(ibv_query_gid, "IBVERBS_1.1", int, (struct gp_ibv_context *, uint8_t, int, union gp_ibv_gid *)) \
	X(ibv_alloc_pd, "IBVERBS_1.1", struct gp_ibv_pd *, (struct gp_ibv_context *)) \
	X(ibv_dealloc_pd, "IBVERBS_1.1", int, (struct gp_ibv_pd *)) \
	X(ibv_reg_mr, "IBVERBS_1.1", struct gp_ibv_mr *, (struct gp_ibv_pd *, void *, size_t, int)) \
	X(ibv_dereg_mr, "IBVERBS_1.1", int, (struct gp_ibv_mr *)) \
	X(ibv_create_cq, "IBVERBS_1.1", struct gp_ibv_cq *, (struct gp_ibv_context *, int, void *, \
							       struct gp_ibv_comp_channel *, int)) \
	X(ibv_destroy_cq, "IBVERBS_1.1", int, (struct gp_ibv_cq *)) \
	X(ibv_create_qp, "IBVERBS_1.1", struct gp_ibv_qp *, (struct gp_ibv_pd *, struct gp_ibv_qp_init_attr *)) \
	X(ibv_modify_qp, "IBVERBS_1.1", int, (struct gp_ibv_qp *, struct gp_ibv_qp_attr *, int)) \
	X(ibv_destroy_qp, "IBVERBS_1.1", int, (struct gp_ibv_qp *)) \
	X(ibv_wc_status_str, "IBVERBS_1.1", const char *, (gp_ibv_wc_status))

/* Entry points of later rdma-core releases, used when present: dma-buf MRs (v34, IBVERBS_1.12) and the
 * GID type query (v32, IBVERBS_1.11). */
#define GP_IBV_FUNCS_OPTIONAL(X) \
	X(ibv_reg_dmabuf_mr, "IBVERBS_1.12", struct gp_ibv_mr *, (struct gp_ibv_pd *, uint64_t, size_t, uint64_t, \
								    int, int)) \
	X(_ibv_query_gid_ex, "IBVERBS_1.11", int, (struct gp_ibv_context *, uint32_t, uint32_t, \
						    struct gp_ibv_gid_entry *, uint32_t, size_t))

/* librdmacm entry points (RDMACM_1.0). */
#define GP_RDMACM_FUNCS(X) \
	X(rdma_create_event_channel, "RDMACM_1.0", struct gp_rdma_event_channel *, (void)) \
	X(rdma_destroy_event_channel, "RDMACM_1.0", void, (struct gp_rdma_event_channel *)) \
	X(rdma_create_id, "RDMACM_1.0", int, (struct gp_rdma_event_channel *, struct gp_rdma_cm_id **, void *, \
						   gp_rdma_port_space)) \
	X(rdma_destroy_id, "RDMACM_1.0", int, (struct gp_rdma_cm_id *)) \
	X(rdma_bind_addr, "RDMACM_1.0", int, (struct gp_rdma_cm_id *, struct sockaddr *)) \
	X(rdma_resolve_addr, "RDMACM_1.0", int, (struct gp_rdma_cm_id *, struct sockaddr *, struct sockaddr *, int)) \
	X(rdma_resolve_route, "RDMACM_1.0", int, (struct gp_rdma_cm_id *, int)) \
	X(rdma_create_qp, "RDMACM_1.0", int, (struct gp_rdma_cm_id *, struct gp_ibv_pd *, struct gp_ibv_qp_init_attr *)) \
	X(rdma_destroy_qp, "RDMACM_1.0", void, (struct gp_rdma_cm_id *)) \
	X(rdma_connect, "RDMACM_1.0", int, (struct gp_rdma_cm_id *, struct gp_rdma_conn_param *)) \
	X(rdma_listen, "RDMACM_1.0", int, (struct gp_rdma_cm_id *, int)) \
	X(rdma_accept, "RDMACM_1.0", int, (struct gp_rdma_cm_id *, struct gp_rdma_conn_param *)) \
	X(rdma_disconnect, "RDMACM_1.0", int, (struct gp_rdma_cm_id *)) \
	X(rdma_get_cm_event, "RDMACM_1.0", int, (struct gp_rdma_event_channel *, struct gp_rdma_cm_event **)) \
	X(rdma_ack_cm_event, "RDMACM_1.0", int, (struct gp_rdma_cm_event *)) \
	X(rdma_event_str, "RDMACM_1.0", const char *, (gp_rdma_cm_event_type))

#endif
