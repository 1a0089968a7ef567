/* cmd_list.c — `taskhop list`: the workloads and migration policies, one line each with a
 * description (policies come from the runtime's th_policy_names()). */
#include <string.h>

#include "cli.h"
#include "cmd.h"

int cmd_list(int argc, char **argv)
{
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
			printf("usage: taskhop list\n\nLists the workloads ('taskhop run NAME --help' "
			       "for options) and the migration policies (--policy).\n\n"
			       "example:\n  taskhop list\n");
			return 0;
		}
		return cli_usage("list", "unexpected argument '%s'", argv[i]);
	}
	int n;
	const struct th_workload *const *all = wl_all(&n);
	printf("workloads:\n");
	for (int i = 0; i < n; i++)
		printf("  %-10s %s\n", all[i]->name, all[i]->description);
	printf("policies:\n");
	const char *const *names = th_policy_names();
	for (int i = 0; names[i]; i++) {
		const char *d = th_policy_description(names[i]);
		printf("  %-10s %s\n", names[i], d ? d : "");
	}
	return 0;
}
