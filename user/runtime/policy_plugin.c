/* policy_plugin.c — policies from shared objects: loads a taskhop_policy.h plugin with
 * dlopen and adapts it to the runtime's struct th_policy; the accessors plugins call. */
#define _GNU_SOURCE
#include <assert.h>
#include <dlfcn.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "core.h"
#include "taskhop_policy.h"

/* One runtime runs at a time, so one plugin is in use at a time. A plugin stays
 * loaded until the process exits: a report written after th_runtime_stop may still
 * hold its name. */
static const struct th_policy_ops *ops;
static struct th_policy adapter;

bool th_policy_is_plugin(const char *name)
{
	size_t n = name ? strlen(name) : 0;
	return n && (strchr(name, '/') || (n > 3 && strcmp(name + n - 3, ".so") == 0));
}

static int plugin_init(struct th_runtime *rt)
{
	return ops->init ? ops->init(rt->nworkers) : 0;
}

static void plugin_fini(struct th_runtime *rt)
{
	(void)rt;
	if (ops->fini)
		ops->fini();
}

/* A worker number out of range would index past the workers: any idle one instead. */
static int plugin_push(struct th_runtime *rt, struct th_worker *self, struct th_task *t, enum th_why why)
{
	int w = ops->push(self ? self->index : -1, t, why);
	assert(w >= -1 && w < rt->nworkers);
	return w >= -1 && w < rt->nworkers ? w : -1;
}

static struct th_task *plugin_pop(struct th_runtime *rt, struct th_worker *w)
{
	(void)rt;
	struct th_task *t = ops->pop(w->index);
	assert(!t || !t->sticky || t->home == w->index); /* a sticky task left its worker */
	return t;
}

static struct th_task *plugin_yield_pop(struct th_runtime *rt, struct th_worker *w,
					const struct th_task *yielder)
{
	(void)rt;
	struct th_task *t = ops->yield_pop(w->index, yielder);
	assert(!t || !t->sticky || t->home == w->index);
	return t;
}

/* Loads the plugin at `path`; NULL with th__set_error: one line naming what is wrong. */
const struct th_policy *th__policy_load(const char *path)
{
	if (access(path, R_OK) != 0) {
		th__set_error("policy plugin %s: not found (%s)", path, strerror(errno));
		return NULL;
	}
	/* RTLD_NOW: an accessor the plugin needs and this runtime lacks fails here, not
	 * in the middle of a run. dlopen of a file already loaded returns that one. */
	void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		th__set_error("policy plugin %s: %s", path, dlerror());
		return NULL;
	}
	const struct th_policy_ops *p = dlsym(h, TH_POLICY_PLUGIN_SYMBOL);
	const char *why = NULL;
	char buf[160];
	if (!p) {
		why = "exports no " TH_POLICY_PLUGIN_SYMBOL " (see taskhop/policy.h)";
	} else if (p->abi_version != TH_POLICY_ABI_VERSION) {
		snprintf(buf, sizeof(buf), "built for policy ABI %u, this runtime has %u: rebuild it "
			 "against this taskhop/policy.h", p->abi_version, TH_POLICY_ABI_VERSION);
		why = buf;
	} else if (!p->name || !p->push || !p->pop) {
		why = "has no name, push or pop";
	}
	if (why) {
		th__set_error("policy plugin %s: %s", path, why);
		dlclose(h);
		return NULL;
	}
	ops = p;
	adapter = (struct th_policy){
		.name = p->name,
		.description = p->description ? p->description : "",
		.init = plugin_init,
		.fini = plugin_fini,
		.push = plugin_push,
		.pop = plugin_pop,
		.yield_pop = p->yield_pop ? plugin_yield_pop : NULL,
	};
	return &adapter;
}

/* ---- what a plugin may call ------------------------------------------------ */

int th_task_home(const th_task *t)
{
	return t->home;
}

bool th_task_sticky(const th_task *t)
{
	return t->sticky;
}

int th_task_last_worker(const th_task *t)
{
	return t->last_worker;
}

th_task **th_task_link(th_task *t)
{
	return &t->next;
}

uint64_t *th_task_word(th_task *t)
{
	return &t->policy_word;
}

static struct th_worker *worker_at(int worker)
{
	assert(th__rt && worker >= 0 && worker < th__rt->nworkers);
	return &th__rt->workers[worker];
}

uint64_t th_policy_rand(int worker)
{
	return th__worker_rand(worker_at(worker));
}

int th_policy_place(void)
{
	return th__place(th__rt);
}

bool th_policy_fair_turn(int worker)
{
	return th_fair_turn(worker_at(worker));
}

void th_policy_error(const char *fmt, ...)
{
	char msg[256];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	th__set_error("%s", msg);
}
