/* SPDX-License-Identifier: Apache-2.0 */
/*
 * write.c — how standalone's controllers write: through the write path
 * (kernel/write/writer.h), on a writer of their own over the store's
 * backend, never on the store directly.  A write of one object is a batch
 * of one; the controllers that write many objects together (a Job's status
 * and the pods it gives up, node-loss evictions, Events) fill a batch
 * themselves and end it with ctl_commit().  Every write carries the
 * preconditions its caller names (resourceVersion, uid).
 */
#include <errno.h>
#include <stdlib.h>

#include "kernel/controllers/controllers-internal.h"

int ctl_commit(struct pk_ctl *ctl, const struct pk_write_result **ret_results, size_t *ret_n)
{
	return pk_writer_batch_commit(ctl->writer, ret_results, ret_n);
}

struct pk_write_ref ctl_ref_of(const struct pk_type *kind, const json_t *obj)
{
	const char *rv = pk_get_string(obj, "metadata.resourceVersion");

	return (struct pk_write_ref){
	    .kind = kind,
	    .ns = pk_namespace(obj),
	    .name = pk_name(obj),
	    .rv = rv ? strtoull(rv, NULL, 10) : 0,
	    .uid = pk_get_string(obj, "metadata.uid"),
	};
}

/* Commit a batch of one: its error, and the object written in *ret when asked. */
static int commit_one(struct pk_ctl *ctl, int r, json_t **ret)
{
	const struct pk_write_result *res = NULL;
	size_t n = 0;

	if (r == 0)
		r = ctl_commit(ctl, &res, &n);
	if (r == 0 && n != 1)
		r = -EIO;
	if (r == 0)
		r = res[0].error;
	if (r == 0 && ret)
		*ret = json_incref(res[0].object);
	return r;
}

int ctl_replace(struct pk_ctl *ctl, const struct pk_write_ref *ref, const json_t *obj, json_t **ret)
{
	int r = pk_writer_batch_begin(ctl->writer);

	if (r == 0)
		r = pk_writer_replace(ctl->writer, ref, obj);
	return commit_one(ctl, r, ret);
}

int ctl_replace_held(struct pk_ctl *ctl, const struct pk_write_ref *ref, json_t *obj, json_t **ret)
{
	int r = pk_writer_batch_begin(ctl->writer);

	if (r == 0)
		r = pk_writer_replace_held(ctl->writer, ref, obj);
	return commit_one(ctl, r, ret);
}

int ctl_status(struct pk_ctl *ctl, const struct pk_write_ref *ref, const json_t *status,
	       json_t **ret)
{
	int r = pk_writer_batch_begin(ctl->writer);

	if (r == 0)
		r = pk_writer_status(ctl->writer, ref, status);
	return commit_one(ctl, r, ret);
}

int ctl_delete(struct pk_ctl *ctl, const struct pk_write_ref *ref, enum pk_write_propagation how)
{
	int r = pk_writer_batch_begin(ctl->writer);

	if (r == 0)
		r = pk_writer_delete(ctl->writer, ref, how);
	return commit_one(ctl, r, NULL);
}
