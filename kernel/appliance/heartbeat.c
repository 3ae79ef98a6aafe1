/* SPDX-License-Identifier: Apache-2.0 */
/*
 * heartbeat.c — which nodes stopped reporting.
 *
 * Every Node write the appliance did not make itself is a heartbeat.  The
 * store drops writes that change nothing, so a node agent that republishes
 * unchanged labels leaves no trace; an agent takes part by refreshing the
 * annotation TOPO_ANN_HEARTBEAT every interval, and only Nodes that
 * carry it are monitored.  The table keeps, per monitored node, the
 * monotonic time of the last write and whether the node was already
 * declared unreachable (so the loop acts once per outage).  Nodes registered
 * from a board file, or without the annotation, are never declared
 * unreachable.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "kernel/appliance/appliance.h"

struct ap_heartbeats {
	json_t *map; /* name -> [last_seen_ms, unreachable] */
};

int ap_heartbeats_new(struct ap_heartbeats **ret)
{
	struct ap_heartbeats *h = calloc(1, sizeof(*h));

	if (!h)
		return -ENOMEM;
	h->map = json_object();
	if (!h->map) {
		free(h);
		return -ENOMEM;
	}
	*ret = h;
	return 0;
}

void ap_heartbeats_free(struct ap_heartbeats *h)
{
	if (!h)
		return;
	json_decref(h->map);
	free(h);
}

bool ap_node_monitored(const json_t *node)
{
	json_t *ann = pk_get(node, "metadata.annotations");

	if (!json_is_object(ann))
		return false;
	if (json_object_get(ann, PK_APPLIANCE_ANN_SIMULATED))
		return false;
	return json_object_get(ann, TOPO_ANN_HEARTBEAT) != NULL;
}

int ap_heartbeat_seen(struct ap_heartbeats *h, const char *name, bool monitored, int64_t now_ms,
		      bool *ret_recovered)
{
	json_t *e;
	bool was_down;

	if (!h || !name)
		return -EINVAL;
	e = json_object_get(h->map, name);
	was_down = e && json_is_true(json_array_get(e, 1));
	if (!monitored) {
		json_object_del(h->map, name);
	} else if (json_object_set_new(h->map, name, json_pack("[I,b]", (json_int_t)now_ms, 0)) <
		   0) {
		return -ENOMEM;
	}
	if (ret_recovered)
		*ret_recovered = was_down;
	return 0;
}

void ap_heartbeat_forget(struct ap_heartbeats *h, const char *name)
{
	if (h && name)
		json_object_del(h->map, name);
}

int ap_heartbeats_expired(struct ap_heartbeats *h, int64_t now_ms, int64_t grace_ms,
			  json_t **ret_names)
{
	json_t *names, *e;
	const char *name;

	if (!h || !ret_names)
		return -EINVAL;
	names = json_array();
	if (!names)
		return -ENOMEM;
	json_object_foreach(h->map, name, e) {
		int64_t last = json_integer_value(json_array_get(e, 0));

		if (json_is_true(json_array_get(e, 1)) || now_ms - last <= grace_ms)
			continue;
		if (json_array_append_new(names, json_string(name)) < 0 ||
		    json_array_set_new(e, 1, json_true()) < 0) {
			json_decref(names);
			return -ENOMEM;
		}
	}
	*ret_names = names;
	return 0;
}
