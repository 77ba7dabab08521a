/*
 * fuzz_rpc.c - libFuzzer target: detm-mcp's JSON-RPC side. Each input is
 * one stdin line for rpc_handle_line: message checks, the lifecycle,
 * version negotiation, batches, tools/list, tools/call argument checks
 * (valid calls go to the real worker, whose detmd URL is a closed port, so
 * the forward path runs and fails fast). Replies go to /dev/null.
 */
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>

#include "forward.h"
#include "rpc.h"
#include "tools.h"
#include "worker.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n);

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	char err[256];
	int fd = open("/dev/null", O_WRONLY);

	(void)argc;
	(void)argv;
	if (fd < 0 || dup2(fd, 1) < 0 || tools_init(err, sizeof err) != 0 ||
	    forward_global_init(err, sizeof err) != 0 || worker_start((const char *const[]){ "http://127.0.0.1:1" }, 1, NULL, &rpc_worker_ops) != 0)
		abort();
	close(fd);
	return 0;
}

int
LLVMFuzzerTestOneInput(const uint8_t *d, size_t n)
{
	rpc_handle_line((const char *)d, n);
	return 0;
}
