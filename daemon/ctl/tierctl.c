// SPDX-License-Identifier: GPL-2.0-only
/*
 * tierctl: ask the running tierd over its control socket.
 *
 * Exit status: 0 done; 1 tierd could not do it (e.g. a reload refused);
 * 2 usage or a request tierd did not understand; 3 tierd is not running
 * (like systemctl status); 4 permission denied.
 */
#include <errno.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ctl_proto.h"
#include "tierd-config.h"

enum { EXIT_FAILED = 1, EXIT_USAGE = 2, EXIT_NOT_RUNNING = 3, EXIT_DENIED = 4 };

static const struct {
	const char *name;
	enum ctl_op op;
	const char *help;
} commands[] = {
	{ "status", CTL_OP_STATUS,
	  "tiers, rates, errors, copy threads, sampling source" },
	{ "nodes", CTL_OP_NODES,
	  "NUMA nodes: tier, CPUs, memory, HMAT, distances" },
	{ "cgroups", CTL_OP_CGROUPS,
	  "cgroup budgets and what each cgroup holds and moved" },
	{ "metrics", CTL_OP_METRICS, "Prometheus text exposition" },
	{ "reload", CTL_OP_RELOAD,
	  "reload the policy file; returns when done (root or control.group)" },
	{ "dry-run", CTL_OP_DRY_RUN,
	  "[on|off]  show or set dry run (setting: root or control.group)" },
};

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: tierctl [--json] [--runtime-dir DIR] COMMAND\n\nCommands:\n");
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		fprintf(f, "  %-9s %s\n", commands[i].name, commands[i].help);
	fprintf(f,
		"\nExit status: 0 ok, 1 failed, 2 usage, 3 tierd not running, 4 permission denied.\n");
}

struct request {
	const char *runtime, *arg;
	uint32_t flags;
	int op;
};

/* The command line into @req; false when tierctl is to exit at once with
 * *@ret_status (--help, --version, a usage error). */
static bool parse_options(int argc, char **argv, struct request *req,
			  int *ret_status)
{
	enum { OPT_RUNTIME = 256, OPT_VERSION };
	static const struct option opts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "runtime-dir", required_argument, NULL, OPT_RUNTIME },
		{ "version", no_argument, NULL, OPT_VERSION },
		{ "help", no_argument, NULL, 'h' },
		{}
	};
	int c;

	*ret_status = 0;
	while ((c = getopt_long(argc, argv, "jh", opts, NULL)) != -1) {
		switch (c) {
		case 'j':
			req->flags |= CTL_F_JSON;
			break;
		case OPT_RUNTIME:
			req->runtime = optarg;
			break;
		case OPT_VERSION:
			printf("tierctl %s\n", TIERD_VERSION);
			return false;
		case 'h':
			usage(stdout);
			return false;
		default:
			usage(stderr);
			*ret_status = EXIT_USAGE;
			return false;
		}
	}
	*ret_status = EXIT_USAGE;
	if (optind == argc) {
		usage(stderr);
		return false;
	}
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		if (!strcmp(argv[optind], commands[i].name))
			req->op = commands[i].op;
	if (req->op < 0) {
		fprintf(stderr, "tierctl: unknown command '%s'\n",
			argv[optind]);
		usage(stderr);
		return false;
	}
	if (req->op == CTL_OP_DRY_RUN && optind + 2 == argc) {
		req->arg = argv[optind + 1];
		if (strcmp(req->arg, "on") && strcmp(req->arg, "off")) {
			fprintf(stderr,
				"tierctl: dry-run takes on or off, not '%s'\n",
				req->arg);
			return false;
		}
	} else if (optind + 1 != argc) {
		fprintf(stderr, "tierctl: too many arguments\n");
		return false;
	}
	*ret_status = 0;
	return true;
}

int main(int argc, char **argv)
{
	struct request req = { .runtime = getenv("TIERD_RUNTIME_DIR"), .op = -1 };
	const char *runtime;
	char path[256], *payload = NULL;
	struct ctl_header h;
	int fd, r, op, status;

	if (!req.runtime || !*req.runtime)
		req.runtime = TIERD_RUNTIME_DIR;
	if (!parse_options(argc, argv, &req, &status))
		return status;
	runtime = req.runtime;
	op = req.op;

	r = ctl_socket_path(runtime, path, sizeof(path));
	if (r == 0)
		r = ctl_connect(path, &fd);
	if (r == -ENOENT || r == -ECONNREFUSED) {
		fprintf(stderr, "tierctl: tierd is not running (no %s)\n",
			path);
		return EXIT_NOT_RUNNING;
	}
	if (r < 0) {
		fprintf(stderr, "tierctl: %s: %s\n", path, strerror(-r));
		return r == -EACCES ? EXIT_DENIED : EXIT_FAILED;
	}
	r = ctl_send_request(fd, op, req.flags, req.arg);
	if (r == 0)
		r = ctl_read_response(fd, &h, &payload, NULL);
	close(fd);
	if (r < 0) {
		fprintf(stderr, "tierctl: %s: %s\n", ctl_op_name(op),
			strerror(-r));
		return EXIT_FAILED;
	}
	fputs(payload, h.code == CTL_OK ? stdout : stderr);
	free(payload);
	switch (h.code) {
	case CTL_OK:
		return 0;
	case CTL_DENIED:
		return EXIT_DENIED;
	case CTL_BAD_REQUEST:
		return EXIT_USAGE;
	default:
		return EXIT_FAILED;
	}
}
