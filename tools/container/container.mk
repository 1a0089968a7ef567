# container.mk — `make container-test`: .ci/run inside a privileged Debian bookworm
# container (podman, or CONTAINER=docker); tools/container/run.sh does the work.

.PHONY: container-test
container-test:
	@bash tools/container/run.sh


# The container's own build directory (the checkout is mounted: its objects stay apart).
.PHONY: clean-container
clean: clean-container
clean-container:
	rm -rf build-container
