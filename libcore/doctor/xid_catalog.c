/* gpup2p doctor — every Xid code of NVIDIA's Xid catalogue for Ampere and later GPUs (codes 1 to 172,
 * read 2026-11-26 at docs.nvidia.com/deploy/xid-errors/analyzing-xid-catalog.html), in our own words:
 * the driver's mnemonic, NVIDIA's immediate-action bucket, what the code means for a machine doing P2P
 * or GPUDirect (error: the GPU or its links need a reset or a power cycle, its peers' transfers fail;
 * warning: one application failed, or the GPU works slower; info: corrected or informational) and
 * the fix. Codes 162-172 came after the buckets: their severity follows the catalogue's notes. The
 * catalogue marks many codes unused on these GPUs (older GPUs: its archive): a warning, as NVIDIA asks
 * for a support case. tests/fixtures/doctor/xid-catalog.txt is the list they are tested against. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "xid.h"

#define ER GP_SEV_ERROR
#define WA GP_SEV_WARNING
#define IN GP_SEV_INFO
#define U(c, nm) { c, GP_XB_CONTACT_SUPPORT, WA, nm, NULL, NULL }
#define X(c, b, s, nm, what, fix) { c, GP_XB_##b, s, nm, what, fix }

#define APP_FIX "the job that ran then died (pid= in the log line); rerun it, and when the same code comes " \
	"back on this GPU only, drain it and run the NVIDIA field diagnostics"
#define CE_FIX "a copy engine (the unit cudaMemcpy and P2P copies run on) failed a job: rerun it; when it " \
	"recurs, gpup2p doctor --active checks copies between every pair"
#define DEC_FIX "a video/JPEG/optical-flow engine failed one job: rerun it; nothing P2P depends on"
#define PSHC "power smoothing (GB200/B200 power-swing damping)"

const struct gp_xid_entry gp_xid_catalog[] = {
	U(1, "ROBUST_CHANNEL_FIFO_ERROR_FIFO_METHOD"), U(2, "ROBUST_CHANNEL_FIFO_ERROR_SW_METHOD"),
	U(3, "ROBUST_CHANNEL_FIFO_ERROR_UNK_METHOD"), U(4, "ROBUST_CHANNEL_FIFO_ERROR_CHANNEL_BUSY"),
	U(5, "ROBUST_CHANNEL_FIFO_ERROR_RUNOUT_OVERFLOW"), U(6, "ROBUST_CHANNEL_FIFO_ERROR_PARSE_ERR"),
	U(7, "ROBUST_CHANNEL_FIFO_ERROR_PTE_ERR"),
	X(8, RESTART_APP, WA, "ROBUST_CHANNEL_FIFO_ERROR_IDLE_TIMEOUT", "GPU stopped processing a job", NULL),
	U(9, "ROBUST_CHANNEL_GR_ERROR_INSTANCE"), U(10, "ROBUST_CHANNEL_GR_ERROR_SINGLE_STEP"),
	X(11, RESTART_APP, WA, "ROBUST_CHANNEL_GR_ERROR_MISSING_HW", "invalid or corrupted push buffer", NULL),
	U(12, "ROBUST_CHANNEL_GR_ERROR_SW_METHOD"),
	X(13, RESTART_APP, WA, "ROBUST_CHANNEL_GR_EXCEPTION", "graphics engine exception, usually the application",
	  "usually the application (an out-of-range access): run it under compute-sanitizer or cuda-gdb; only "
	  "when that finds nothing suspect the driver or the GPU"),
	X(14, IGNORE, IN, "ROBUST_CHANNEL_FAKE_ERROR", "an error injected on purpose", NULL),
	U(15, "ROBUST_CHANNEL_SCANLINE_TIMEOUT"), U(16, "ROBUST_CHANNEL_VBLANK_CALLBACK_TIMEOUT"),
	U(17, "ROBUST_CHANNEL_PARAMETER_ERROR"), U(18, "ROBUST_CHANNEL_BUS_MASTER_TIMEOUT_ERROR"),
	U(19, "ROBUST_CHANNEL_DISP_MISSED_NOTIFIER"), U(20, "ROBUST_CHANNEL_MPEG_ERROR_SW_METHOD"),
	U(21, "ROBUST_CHANNEL_ME_ERROR_SW_METHOD"), U(22, "ROBUST_CHANNEL_VP_ERROR_SW_METHOD"),
	U(23, "ROBUST_CHANNEL_RC_LOGGING_ENABLED"), U(24, "ROBUST_CHANNEL_GR_SEMAPHORE_TIMEOUT"),
	X(25, RESTART_APP, WA, "ROBUST_CHANNEL_GR_ILLEGAL_NOTIFY", "invalid or illegal push buffer", NULL),
	U(26, "ROBUST_CHANNEL_FIFO_ERROR_FBISTATE_TIMEOUT"), U(27, "ROBUST_CHANNEL_VP_ERROR"),
	U(28, "ROBUST_CHANNEL_VP2_ERROR"), U(29, "ROBUST_CHANNEL_BSP_ERROR"), U(30, "ROBUST_CHANNEL_BAD_ADDR_ACCESS"),
	X(31, RESTART_APP, WA, "ROBUST_CHANNEL_FIFO_ERROR_MMU_ERR_FLT", "GPU memory page fault, usually the application",
	  "usually the application (an illegal address; a peer pointer used without P2P access enabled is one): "
	  "run it under compute-sanitizer or cuda-gdb before suspecting the GPU"),
	X(32, RESTART_APP, WA, "ROBUST_CHANNEL_PBDMA_ERROR", "push buffer DMA fault: often PCIe signal quality",
	  "rerun the job; when it recurs, look at the GPU's PCIe link (gpup2p doctor --only pcie.aer,pcie.replay): "
	  "reseat the GPU or its riser"),
	U(33, "ROBUST_CHANNEL_SEC_ERROR"), U(34, "ROBUST_CHANNEL_MSVLD_ERROR"), U(35, "ROBUST_CHANNEL_MSPDEC_ERROR"),
	U(36, "ROBUST_CHANNEL_MSPPP_ERROR"),
	X(37, IGNORE, IN, "ROBUST_CHANNEL_FECS_ERR_UNIMP_FIRMWARE_METHOD", "driver firmware error", NULL),
	X(38, IGNORE, IN, "ROBUST_CHANNEL_FECS_ERR_WATCHDOG_TIMEOUT", "driver firmware watchdog timeout", NULL),
	X(39, RESTART_APP, WA, "ROBUST_CHANNEL_CE0_ERROR", "copy engine 0 exception", CE_FIX),
	X(40, RESTART_APP, WA, "ROBUST_CHANNEL_CE1_ERROR", "copy engine 1 exception", CE_FIX),
	X(41, RESTART_APP, WA, "ROBUST_CHANNEL_CE2_ERROR", "copy engine 2 exception", CE_FIX),
	U(42, "ROBUST_CHANNEL_VIC_ERROR"),
	X(43, IGNORE, IN, "ROBUST_CHANNEL_RESETCHANNEL_VERIF_ERROR", "an application stopped by a fault of its own; "
	  "the GPU is healthy", NULL),
	X(44, IGNORE, IN, "ROBUST_CHANNEL_GR_FAULT_DURING_CTXSW", "graphics engine fault during a context switch", NULL),
	X(45, WORKFLOW_XID_45, IN, "ROBUST_CHANNEL_PREEMPTIVE_REMOVAL", "the driver tore down an aborted job "
	  "(Ctrl-C, a kill, a reset, or an earlier Xid)", NULL),
	X(46, RESET_GPU, ER, "ROBUST_CHANNEL_GPU_TIMEOUT_ERROR", "GPU stopped processing", NULL),
	U(47, "ROBUST_CHANNEL_NVENC0_ERROR"),
	X(48, WORKFLOW_XID_48, ER, "ROBUST_CHANNEL_GPU_ECC_DBE", "uncorrectable (double-bit) ECC error", NULL),
	U(49, "SILENT_RUNNING_CONSTANT_LEVEL_SET_BY_REGISTRY"), U(50, "SILENT_RUNNING_LEVEL_TRANSITION_DUE_TO_RC_ERROR"),
	U(51, "SILENT_RUNNING_STRESS_TEST_FAILURE"), U(52, "SILENT_RUNNING_LEVEL_TRANS_DUE_TO_TEMP_RISE"),
	U(53, "SILENT_RUNNING_TEMP_REDUCED_CLOCKING"),
	X(54, CHECK_MECHANICALS, WA, "SILENT_RUNNING_PWR_REDUCED_CLOCKING", "auxiliary power not connected to the "
	  "board: clocks held low", NULL),
	U(55, "SILENT_RUNNING_TEMPERATURE_READ_ERROR"), U(56, "DISPLAY_CHANNEL_EXCEPTION"),
	U(57, "FB_LINK_TRAINING_FAILURE_ERROR"), U(58, "FB_MEMORY_ERROR"), U(59, "PMU_ERROR"),
	X(60, RESTART_APP, WA, "ROBUST_CHANNEL_SEC2_ERROR", "video processor exception", DEC_FIX),
	U(61, "PMU_BREAKPOINT"),
	X(62, RESET_GPU, ER, "PMU_HALT_ERROR", "internal micro-controller halted", NULL),
	X(63, IGNORE, IN, "INFOROM_DRAM_RETIREMENT_EVENT", "ECC row remapping or page retirement recorded",
	  "recorded and applied at the next GPU reset: gpu.ecc says whether one waits for it"),
	X(64, RESET_GPU, ER, "INFOROM_DRAM_RETIREMENT_FAILURE", "ECC row remapping or page retirement failed", NULL),
	U(65, "ROBUST_CHANNEL_NVENC1_ERROR"),
	X(66, IGNORE, IN, "ROBUST_CHANNEL_FECS_ERR_REG_ACCESS_VIOLATION", "illegal register access by the driver", NULL),
	X(67, IGNORE, IN, "ROBUST_CHANNEL_FECS_ERR_VERIF_VIOLATION", "illegal access by the driver", NULL),
	X(68, RESTART_APP, WA, "ROBUST_CHANNEL_NVDEC0_ERROR", "NVDEC0 exception", DEC_FIX),
	X(69, RESTART_APP, WA, "ROBUST_CHANNEL_GR_CLASS_ERROR", "graphics engine class error", NULL),
	X(70, RESTART_APP, WA, "ROBUST_CHANNEL_CE3_ERROR", "copy engine 3 error", CE_FIX),
	X(71, RESTART_APP, WA, "ROBUST_CHANNEL_CE4_ERROR", "copy engine 4 error", CE_FIX),
	X(72, RESTART_APP, WA, "ROBUST_CHANNEL_CE5_ERROR", "copy engine 5 error", CE_FIX),
	U(73, "ROBUST_CHANNEL_NVENC2_ERROR"),
	X(74, WORKFLOW_NVLINK_ERR, ER, "NVLINK_ERROR", "NVLink error",
	  "nvidia-smi nvlink -s and -e show the link; the fault may be the GPU at the other end (check its Xids "
	  "too); drain, reset the GPU or reboot; when it recurs after that, have the board or bridge serviced"),
	X(75, RESTART_APP, WA, "ROBUST_CHANNEL_CE6_ERROR", "copy engine 6 error", CE_FIX),
	X(76, RESTART_APP, WA, "ROBUST_CHANNEL_CE7_ERROR", "copy engine 7 error", CE_FIX),
	X(77, RESTART_APP, WA, "ROBUST_CHANNEL_CE8_ERROR", "copy engine 8 error", CE_FIX),
	X(78, UPDATE_SWFW, WA, "VGPU_START_ERROR", "vGPU failed to start", NULL),
	X(79, RESTART_BM, ER, "ROBUST_CHANNEL_GPU_HAS_FALLEN_OFF_THE_BUS", "GPU has fallen off the bus",
	  "power-cycle the machine (a reset cannot reach it); before reseating or RMA check what takes a PCIe "
	  "link down: the GPU's power cables and PSU, the riser or retimer, and the link (journalctl -k for AER "
	  "and pciehp lines, the BMC's event log); replace the GPU only when it falls off again"),
	X(80, RESTART_APP, WA, "PBDMA_PUSHBUFFER_CRC_MISMATCH", "corrupted data sent to the GPU",
	  "rerun the job; when it recurs, check the PCIe link (pcie.aer, pcie.replay) and the host's memory"),
	U(81, "ROBUST_CHANNEL_VGA_SUBSYSTEM_ERROR"),
	X(82, RESTART_APP, WA, "ROBUST_CHANNEL_NVJPG0_ERROR", "NVJPG0 error", DEC_FIX),
	X(83, RESTART_APP, WA, "ROBUST_CHANNEL_NVDEC1_ERROR", "NVDEC1 error", DEC_FIX),
	X(84, RESTART_APP, WA, "ROBUST_CHANNEL_NVDEC2_ERROR", "NVDEC2 error", DEC_FIX),
	X(85, RESTART_APP, WA, "ROBUST_CHANNEL_CE9_ERROR", "copy engine 9 error", CE_FIX),
	X(86, RESTART_APP, WA, "ROBUST_CHANNEL_OFA0_ERROR", "optical flow engine exception", DEC_FIX),
	U(87, "NVTELEMETRY_DRIVER_REPORT"),
	X(88, RESTART_APP, WA, "ROBUST_CHANNEL_NVDEC3_ERROR", "NVDEC3 error", DEC_FIX),
	X(89, RESTART_APP, WA, "ROBUST_CHANNEL_NVDEC4_ERROR", "NVDEC4 error", DEC_FIX),
	U(90, "LTC_ERROR"), U(91, "RESERVED_XID"),
	X(92, IGNORE, IN, "EXCESSIVE_SBE_INTERRUPTS", "high rate of corrected single-bit ECC errors",
	  "corrected: watch for Xid 48, 63 and 64 on this GPU (memory wearing out)"),
	X(93, IGNORE, IN, "INFOROM_ERASE_LIMIT_EXCEEDED", "InfoROM wear limit set with nvflash reached",
	  "clear the limit with nvflash --elsessionclear; report it to NVIDIA if that does not help"),
	X(94, RESTART_APP, WA, "ROBUST_CHANNEL_CONTAINED_ERROR", "contained memory error: one application stopped",
	  "restart the application that hit it; the others go on; reset the GPU when convenient "
	  "(nvidia-smi -r -i BDF) so the bad memory is remapped"),
	X(95, RESET_GPU, ER, "ROBUST_CHANNEL_UNCONTAINED_ERROR", "uncontained memory error: every application on "
	  "the GPU stopped", NULL),
	X(96, RESTART_APP, WA, "ROBUST_CHANNEL_NVDEC5_ERROR", "NVDEC5 error", DEC_FIX),
	X(97, RESTART_APP, WA, "ROBUST_CHANNEL_NVDEC6_ERROR", "NVDEC6 error", DEC_FIX),
	X(98, RESTART_APP, WA, "ROBUST_CHANNEL_NVDEC7_ERROR", "NVDEC7 error", DEC_FIX),
	X(99, RESTART_APP, WA, "ROBUST_CHANNEL_NVJPG1_ERROR", "NVJPG1 error", DEC_FIX),
	X(100, RESTART_APP, WA, "ROBUST_CHANNEL_NVJPG2_ERROR", "NVJPG2 error", DEC_FIX),
	X(101, RESTART_APP, WA, "ROBUST_CHANNEL_NVJPG3_ERROR", "NVJPG3 error", DEC_FIX),
	X(102, RESTART_APP, WA, "ROBUST_CHANNEL_NVJPG4_ERROR", "NVJPG4 error", DEC_FIX),
	X(103, RESTART_APP, WA, "ROBUST_CHANNEL_NVJPG5_ERROR", "NVJPG5 error", DEC_FIX),
	X(104, RESTART_APP, WA, "ROBUST_CHANNEL_NVJPG6_ERROR", "NVJPG6 error", DEC_FIX),
	X(105, RESTART_APP, WA, "ROBUST_CHANNEL_NVJPG7_ERROR", "NVJPG7 error", DEC_FIX),
	X(106, IGNORE, IN, "SMBPBI_TEST_MESSAGE", "a test message from the board management controller", NULL),
	X(107, IGNORE, IN, "SMBPBI_TEST_MESSAGE_SILENT", "a silent test message from the board management controller",
	  NULL),
	X(108, IGNORE, IN, "NVLINK_REMOTE_TRANSLATION_ERROR", "NVLink remote translation error (not raised today)",
	  NULL),
	X(109, RESET_GPU, ER, "ROBUST_CHANNEL_CTXSW_TIMEOUT_ERROR", "context switch timeout", NULL),
	X(110, RESET_GPU, ER, "SEC_FAULT_ERROR", "security fault: usually failing hardware",
	  "undo recent hardware changes and cold-reset the machine (power off, on); when it stays, contact the "
	  "hardware vendor"),
	U(111, "BUNDLE_ERROR_EVENT"), U(112, "DISP_SUPERVISOR_ERROR"), U(113, "DP_LT_FAILURE"),
	U(114, "HEAD_RG_UNDERFLOW"), U(115, "CORE_CHANNEL_REGS"), U(116, "WINDOW_CHANNEL_REGS"),
	U(117, "CURSOR_CHANNEL_REGS"), U(118, "HEAD_REGS"),
	X(119, RESET_GPU, ER, "GSP_RPC_TIMEOUT", "the GPU's GSP firmware did not answer the driver",
	  "drain, reset the GPU (nvidia-smi -r -i BDF) or power-cycle the machine; when it comes back after a power "
	  "cycle, update the driver and follow NVIDIA's GPU debug guidelines"),
	X(120, RESET_GPU, ER, "GSP_ERROR", "error in the GPU's GSP firmware",
	  "drain, reset the GPU (nvidia-smi -r -i BDF) or power-cycle the machine; when it comes back after a power "
	  "cycle, update the driver and follow NVIDIA's GPU debug guidelines"),
	X(121, IGNORE, IN, "C2C_ERROR", "corrected errors on the NVLink-C2C link to the Grace CPU",
	  "corrected, no impact: reset the GPU in a service window to retrain the link"),
	U(122, "SPI_PMU_RPC_READ_FAIL"), U(123, "SPI_PMU_RPC_WRITE_FAIL"), U(124, "SPI_PMU_RPC_ERASE_FAIL"),
	U(125, "INFOROM_FS_ERROR"),
	X(126, RESTART_APP, WA, "ROBUST_CHANNEL_CE10_ERROR", "copy engine 10 error", CE_FIX),
	X(127, RESTART_APP, WA, "ROBUST_CHANNEL_CE11_ERROR", "copy engine 11 error", CE_FIX),
	X(128, RESTART_APP, WA, "ROBUST_CHANNEL_CE12_ERROR", "copy engine 12 error", CE_FIX),
	X(129, RESTART_APP, WA, "ROBUST_CHANNEL_CE13_ERROR", "copy engine 13 error", CE_FIX),
	X(130, RESTART_APP, WA, "ROBUST_CHANNEL_CE14_ERROR", "copy engine 14 error", CE_FIX),
	X(131, RESTART_APP, WA, "ROBUST_CHANNEL_CE15_ERROR", "copy engine 15 error", CE_FIX),
	X(132, RESTART_APP, WA, "ROBUST_CHANNEL_CE16_ERROR", "copy engine 16 error", CE_FIX),
	X(133, RESTART_APP, WA, "ROBUST_CHANNEL_CE17_ERROR", "copy engine 17 error", CE_FIX),
	X(134, RESTART_APP, WA, "ROBUST_CHANNEL_CE18_ERROR", "copy engine 18 error", CE_FIX),
	X(135, RESTART_APP, WA, "ROBUST_CHANNEL_CE19_ERROR", "copy engine 19 error", CE_FIX),
	X(136, RESET_GPU, ER, "ALI_TRAINING_FAIL", "NVLink training failed",
	  "reset the GPU (nvidia-smi -r -i BDF) or reboot; when the link fails to train again, have its signal "
	  "path (bridge, board, cables) checked"),
	X(137, IGNORE, WA, "NVLINK_PRIV_ERR", "illegal NVLink peer access (remote MMU fault), usually the application",
	  "an application touched peer memory it may not: run it under compute-sanitizer or cuda-gdb; P2P "
	  "itself is not broken"),
	U(138, "ROBUST_CHANNEL_DLA_ERROR"),
	X(139, RESTART_APP, WA, "ROBUST_CHANNEL_OFA1_ERROR", "optical flow engine 1 error", DEC_FIX),
	X(140, RESET_GPU, ER, "UNRECOVERABLE_ECC_ERROR_ESCAPE", "uncorrectable ECC error the driver could not "
	  "remap", NULL),
	X(141, IGNORE, IN, "ROBUST_CHANNEL_FAST_PATH_ERROR", "CUDA fast path error", NULL),
	X(142, CONTACT_SUPPORT, WA, "ROBUST_CHANNEL_NVENC3_ERROR", "NVENC3 error", NULL),
	X(143, RESET_GPU, ER, "GPU_INIT_ERROR", "GPU failed to initialise", NULL),
	X(144, WORKFLOW_NVLINK5_ERR, WA, "NVLINK_SAW_ERROR", "NVLink 5 SAW error", NULL),
	X(145, WORKFLOW_NVLINK5_ERR, WA, "NVLINK_RLW_ERROR", "NVLink 5 RLW error", NULL),
	X(146, WORKFLOW_NVLINK5_ERR, WA, "NVLINK_TLW_ERROR", "NVLink 5 TLW error", NULL),
	X(147, WORKFLOW_NVLINK5_ERR, WA, "NVLINK_TREX_ERROR", "NVLink 5 TREX error", NULL),
	X(148, WORKFLOW_NVLINK5_ERR, WA, "NVLINK_NVLPW_CTRL_ERROR", "NVLink 5 NVLPW control error", NULL),
	X(149, WORKFLOW_NVLINK5_ERR, ER, "NVLINK_NETIR_ERROR", "NVLink 5 link fatal (NETIR)",
	  "the link is down: reset the GPU (nvidia-smi -r -i BDF); the cause may be the device at the other end "
	  "(its Xids and SXids); when it recurs, have the link's signal path checked"),
	X(150, WORKFLOW_NVLINK5_ERR, WA, "NVLINK_MSE_ERROR", "NVLink 5 MSE error", NULL),
	X(151, RESTART_VM, WA, "ROBUST_CHANNEL_KEY_ROTATION_ERROR", "confidential computing key rotation error", NULL),
	X(152, IGNORE, IN, "ROBUST_CHANNEL_DLA_SMMU_ERROR", "DLA SMMU error", NULL),
	X(153, IGNORE, IN, "ROBUST_CHANNEL_DLA_TIMEOUT", "DLA timeout", NULL),
	X(154, XID_154, IN, "GPU_RECOVERY_ACTION_CHANGED", "the driver's recovery action for this GPU changed", NULL),
	X(155, RESET_GPU, ER, "NVLINK_SW_DEFINED_ERROR", "an NVLink taken down on purpose (or put to sleep)",
	  "reset the GPU (nvidia-smi -r -i BDF) to bring the link back; find who took it down (fabric manager, "
	  "an operator)"),
	X(156, RESET_GPU, ER, "RESOURCE_RETIREMENT_EVENT", "a GPU resource was retired: applies at the next reset",
	  NULL),
	X(157, IGNORE, WA, "RESOURCE_RETIREMENT_FAILURE", "a GPU resource could not be retired: no spares left",
	  "jobs still run but may hit the same Xid again: plan the GPU's replacement"),
	X(158, RESET_GPU, ER, "GPU_FATAL_TIMEOUT", "GPU fatal timeout", NULL),
	X(159, CHECK_UVM, WA, "ROBUST_CHANNEL_CHI_NON_DATA_ERROR", "CHI non-data error on the C2C link", NULL),
	X(160, IGNORE, IN, "CHANNEL_RETIREMENT_EVENT", "a channel was retired", NULL),
	X(161, IGNORE, IN, "CHANNEL_RETIREMENT_FAILURE", "a channel could not be retired", NULL),
	X(162, NONE, IN, "PSHC_REENGAGED", PSHC " engaged again", "nothing to do"),
	X(163, NONE, IN, "PSHC_DISENGAGED", PSHC " disengaged",
	  "no reset needed; to have it back, resolve the thermal events, or reload the driver when it timed out"),
	X(164, NONE, WA, "PSHC_LOW_LIFETIME", PSHC " near the end of its life",
	  "watch the power swings; where power smoothing is needed, plan replacing the GPU"),
	X(165, NONE, WA, "PSHC_ZERO_LIFETIME", PSHC " worn out: disabled, power swings follow",
	  "replace the GPU where power smoothing is needed; make sure the facility absorbs the power swings"),
	X(166, NONE, WA, "NVLINK_SECURE_CRYPTO_ERR", "encrypted NVLink traffic before the link was set up for it "
	  "(confidential computing)", "confidential computing mode only: check its NVLink encryption set-up"),
	X(167, NONE, ER, "PCIE_FATAL_TIMEOUT", "fatal PCIe timeout",
	  "the GPU's PCIe link timed out: power-cycle the machine; check the GPU's power, its riser or retimer and "
	  "the link (pcie.aer, journalctl -k) before reseating or replacing it"),
	X(168, NONE, WA, "REDUCED_GPU_MEMORY_CAPACITY", "errors in the write-protected region: less GPU memory",
	  "enable ECC (nvidia-smi -e 1, then reset) so rows can be remapped"),
	X(169, NONE, ER, "SEC2_HALT_ERROR", "internal micro-controller (SEC2) halted", NULL),
	X(170, NONE, WA, "NVLINK_SECURE_OTHER", "NVLink interrupt in confidential computing mode",
	  "confidential computing mode only: check its NVLink set-up"),
	X(171, NONE, ER, "UNCORRECTABLE_DRAM_ERROR", "detail of an Xid 48: the error was in DRAM", NULL),
	X(172, NONE, ER, "UNCORRECTABLE_SRAM_ERROR", "detail of an Xid 48: the error was in on-chip SRAM", NULL),
};
const int gp_xid_ncatalog = (int)(sizeof(gp_xid_catalog) / sizeof(gp_xid_catalog[0]));

const struct gp_xid_entry *gp_xid_lookup(int code)
{
	int lo = 0, hi = gp_xid_ncatalog - 1;

	while (lo <= hi) {
		int mid = (lo + hi) / 2;

		if (gp_xid_catalog[mid].code == code)
			return &gp_xid_catalog[mid];
		if (gp_xid_catalog[mid].code < code)
			lo = mid + 1;
		else
			hi = mid - 1;
	}
	return NULL;
}

const char *gp_xid_bucket_name(enum gp_xid_bucket b)
{
	static const char *const names[GP_XB_N] = {
		"-", "CONTACT_SUPPORT", "RESTART_APP", "IGNORE", "RESET_GPU", "RESTART_BM", "RESTART_VM",
		"UPDATE_SWFW", "CHECK_MECHANICALS", "CHECK_UVM", "WORKFLOW_XID_45", "WORKFLOW_XID_48",
		"WORKFLOW_NVLINK_ERR", "WORKFLOW_NVLINK5_ERR", "XID_154",
	};

	return b >= 0 && b < GP_XB_N ? names[b] : "?";
}

/* The bucket's fix; %s is the GPU's address. */
static const char *bucket_fix(const struct gp_xid_entry *x)
{
	if (!x->what)
		return "not raised by drivers for Ampere and later (older GPUs: NVIDIA's Xid archive): collect "
		       "nvidia-bug-report.sh and contact NVIDIA support";
	switch (x->bucket) {
	case GP_XB_RESTART_APP:
		return APP_FIX;
	case GP_XB_RESET_GPU:
		return "drain the GPU, then nvidia-smi -r -i %s (or reboot); when the same Xid comes back, have the "
		       "GPU serviced (RMA)";
	case GP_XB_RESTART_BM:
		return "power-cycle the machine";
	case GP_XB_RESTART_VM:
		return "restart the virtual machine";
	case GP_XB_UPDATE_SWFW:
		return "update the vGPU software and the GPU firmware to a matching release";
	case GP_XB_CHECK_MECHANICALS:
		return "connect the board's auxiliary power cables (and check the PSU rails), then reboot";
	case GP_XB_CHECK_UVM:
		return "check the nvidia_uvm module and the application's unified memory use; rerun the job";
	case GP_XB_WORKFLOW_XID_45:
		return "follows an aborted job or another Xid (see those); seen alone and repeatedly on an NVSwitch "
		       "system: restart nvidia-fabricmanager";
	case GP_XB_WORKFLOW_XID_48:
		return "drain the GPU, then nvidia-smi -r -i %s (or reboot); nvidia-smi -q -d ECC says whether SRAM "
		       "crossed its error threshold: then run the field diagnostics and RMA";
	case GP_XB_WORKFLOW_NVLINK5_ERR:
		return "decode the error status with NVIDIA's Xid 144-150 table: fatal ones need nvidia-smi -r -i %s; "
		       "an Xid 154 on this GPU names the action the driver wants";
	case GP_XB_CONTACT_SUPPORT:
		return "collect nvidia-bug-report.sh and contact NVIDIA support";
	default:
		return "none needed; when it repeats, collect nvidia-bug-report.sh";
	}
}

void gp_xid_fix(const struct gp_xid_entry *x, const char *bdf, char *buf, size_t n)
{
	const char *fmt = x->fix ? x->fix : bucket_fix(x);
	const char *p = strstr(fmt, "%s");
	const char *bdfword = strstr(fmt, " BDF");

	if (p) /* the bucket's text names the GPU */
		snprintf(buf, n, "%.*s%s%s", (int)(p - fmt), fmt, bdf, p + 2);
	else if (bdfword) /* an entry's own text says BDF */
		snprintf(buf, n, "%.*s %s%s", (int)(bdfword - fmt), fmt, bdf, bdfword + 4);
	else
		snprintf(buf, n, "%s", fmt);
}

int gp_xid154_action(const char *line)
{
	const char *p = strstr(line, " to 0x");
	char *end;
	long v;

	if (!p)
		return -1;
	v = strtol(p + 6, &end, 16);
	return end == p + 6 || v < 0 || v > 4 ? -1 : (int)v;
}
