// redirect.c: the XDP program of pisa's AF_XDP ports. Every frame received on an interface
// queue that has an AF_XDP socket registered in `xsks_map` (keyed by queue index) is
// redirected to that socket; frames on other queues go on to the kernel stack.
//
// Built by dataplane/build.rs with `clang -O2 -target bpf` when the `afxdp` feature is on.
// Needs only <linux/bpf.h>; the two helpers are declared here by their fixed helper ids.
#include <linux/bpf.h>

#define SEC(name) __attribute__((section(name), used))

// Legacy map definition layout, read by the loader from the "maps" section.
struct bpf_map_def {
	unsigned int type;
	unsigned int key_size;
	unsigned int value_size;
	unsigned int max_entries;
	unsigned int map_flags;
};

struct bpf_map_def SEC("maps") xsks_map = {
	.type = BPF_MAP_TYPE_XSKMAP,
	.key_size = sizeof(__u32),
	.value_size = sizeof(__u32),
	.max_entries = 64,
	.map_flags = 0,
};

static void *(*bpf_map_lookup_elem)(void *map, const void *key) = (void *)BPF_FUNC_map_lookup_elem;
static long (*bpf_redirect_map)(void *map, __u64 key, __u64 flags) = (void *)BPF_FUNC_redirect_map;

SEC("xdp")
int pisa_xsk_redirect(struct xdp_md *ctx)
{
	__u32 queue = ctx->rx_queue_index;

	if (bpf_map_lookup_elem(&xsks_map, &queue))
		return (int)bpf_redirect_map(&xsks_map, queue, XDP_PASS);
	return XDP_PASS;
}

char _license[] SEC("license") = "Dual BSD/GPL";
