#!/usr/bin/env bash
# debian_mirror.sh — prints the Debian mirror this host's apt is configured with (the
# bookworm main archive), for debootstrap and the arm64 sysroot; deb.debian.org if none.
set -euo pipefail
mirror=$(apt-get indextargets --format '$(REPO_URI) $(RELEASE) $(COMPONENT)' 2>/dev/null |
	awk '$2 == "bookworm" && $3 == "main" { print $1; exit }')
echo "${mirror:-http://deb.debian.org/debian/}"
