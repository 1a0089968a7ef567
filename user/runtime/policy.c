/* policy.c — the registry of migration policies: add one line per policy file.
 * th_runtime_start looks the configured name up here, or loads a plugin (policy_plugin.c). */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>

#include "core.h"

static const struct th_policy *const policies[] = {
	&th_policy_sticky,
	&th_policy_shared,
	&th_policy_steal,
	&th_policy_multiqueue,
	&th_policy_fcfs,
	&th_policy_kthread,
	&th_policy_feedback,
};

#define NPOLICIES (sizeof(policies) / sizeof(policies[0]))

const struct th_policy *th__policy_find(const char *name)
{
	for (size_t i = 0; name && i < NPOLICIES; i++)
		if (!strcmp(policies[i]->name, name))
			return policies[i];
	return NULL;
}

const char *const *th_policy_names(void)
{
	static const char *names[NPOLICIES + 1];
	for (size_t i = 0; i < NPOLICIES; i++)
		names[i] = policies[i]->name;
	names[NPOLICIES] = NULL;
	return names;
}

const char *th_policy_description(const char *name)
{
	const struct th_policy *p = th__policy_find(name);
	return p ? p->description : NULL;
}

/* "a, b, c" for error messages; caller frees. */
static char *policy_list_text(void)
{
	size_t len = 1;
	for (size_t i = 0; i < NPOLICIES; i++)
		len += strlen(policies[i]->name) + 2;
	char *s = malloc(len);
	if (!s)
		return NULL;
	s[0] = 0;
	for (size_t i = 0; i < NPOLICIES; i++) {
		if (i)
			strcat(s, ", ");
		strcat(s, policies[i]->name);
	}
	return s;
}


/* The policy cfg.policy names: built in, or a plugin's path. NULL with th__set_error. */
const struct th_policy *th__policy_resolve(const char *name)
{
	if (th_policy_is_plugin(name))
		return th__policy_load(name);
	const struct th_policy *p = th__policy_find(name);
	if (!p) {
		char *known = policy_list_text();
		th__set_error("unknown policy '%s' (known: %s, or a plugin's path: ./NAME.so)", name,
			      known ? known : "?");
		free(known);
	}
	return p;
}
