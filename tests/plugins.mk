# plugins.mk — broken policy plugins: tests/test_policy_plugin.c must refuse to load
# them, tests/test_policy_contract.c must abort on them (tests/plugins/NAME.c -> $(B)/tests/plugins/NAME.so).
$(foreach s,$(wildcard tests/plugins/*.c),$(eval $(call plugin_rule,$(s),$(B)/tests/plugins/$(basename $(notdir $(s))).so)))
