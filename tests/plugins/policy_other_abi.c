/* policy_other_abi.c — a plugin built for another policy ABI than this runtime's:
 * loading it must fail with a line that says so (tests/test_policy_plugin.c). */
#include <taskhop/policy.h>

static int push(int self, th_task *t, enum th_why why)
{
	(void)self, (void)t, (void)why;
	return -1;
}

static th_task *pop(int worker)
{
	(void)worker;
	return NULL;
}

const struct th_policy_ops th_policy_plugin = {
	.abi_version = TH_POLICY_ABI_VERSION + 1,
	.name = "other_abi",
	.push = push,
	.pop = pop,
};
