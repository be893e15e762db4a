// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "ctl_cmd.h"
#include "json.h"
#include "log.h"
#include "metrics.h"
#include "status.h"

void ctl_json_message(FILE *f, bool ok, const char *msg)
{
	fprintf(f, "{\"ok\":%s,\"message\":", ok ? "true" : "false");
	json_str(f, msg);
	fputs("}\n", f);
}

static int cmd_metrics(struct tierd *d, FILE *f)
{
	struct metrics *m = metrics_new();
	char *text = NULL;
	size_t len;
	int r = -ENOMEM;

	if (m) {
		tierd_metrics(d, m);
		r = metrics_render(m, &text, &len);
	}
	metrics_free(m);
	if (r < 0) {
		fprintf(f, "metrics: %s\n", strerror(-r));
		return CTL_FAILED;
	}
	fwrite(text, 1, len, f);
	free(text);
	return CTL_OK;
}

/* dry-run [on|off] and reload: the requests that may change something. */
static int cmd_change(struct tierd *d, const struct ctl_header *h, const char *arg,
		      const struct ucred *cred, FILE *f)
{
	bool json = h->flags & CTL_F_JSON;
	char why[4096];

	if (h->code == CTL_OP_DRY_RUN && !*arg) {
		if (json)
			fprintf(f, "{\"dry_run\":%s}\n",
				d->dry_run ? "true" : "false");
		else
			fprintf(f, "dry run: %s\n", d->dry_run ? "on" : "off");
		return CTL_OK;
	}
	if (h->code == CTL_OP_DRY_RUN) {
		tierd_set_dry_run(d, !strcmp(arg, "on"));
		snprintf(why, sizeof(why), "dry run: %s\n",
			 d->dry_run ? "on" : "off");
	} else {
		log_info("Reload requested by uid %u (pid %d)", cred->uid,
			 cred->pid);
		if (tierd_reload(d, why, sizeof(why)) < 0) {
			if (json)
				ctl_json_message(f, false, why);
			else
				fprintf(f,
					"%sreload refused: tierd keeps running the previous policy\n",
					why);
			return CTL_FAILED;
		}
		snprintf(why, sizeof(why), "reloaded %s\n", d->config_path);
	}
	if (json)
		ctl_json_message(f, true, why);
	else
		fputs(why, f);
	return CTL_OK;
}

int ctl_cmd_run(struct tierd *d, const struct ctl_header *h, const char *arg,
		const struct ucred *cred, uint64_t now_ns, FILE *f)
{
	bool json = h->flags & CTL_F_JSON;

	switch (h->code) {
	case CTL_OP_STATUS:
		status_render(d, f, json, now_ns);
		return CTL_OK;
	case CTL_OP_NODES:
		status_render_nodes(d, f, json);
		return CTL_OK;
	case CTL_OP_CGROUPS:
		status_render_cgroups(d, f, json);
		return CTL_OK;
	case CTL_OP_METRICS:
		return cmd_metrics(d, f);
	case CTL_OP_RELOAD:
	case CTL_OP_DRY_RUN:
		return cmd_change(d, h, arg, cred, f);
	default:
		return CTL_BAD_REQUEST;
	}
}
