/* policy_no_symbol.c — a shared object that exports no th_policy_plugin: loading it
 * as a policy must fail with a line that says so (tests/test_policy_plugin.c). */
#include <taskhop/policy.h>

const struct th_policy_ops th_policy_plugn = { .abi_version = TH_POLICY_ABI_VERSION };
