#!/usr/bin/env bash
# Installs the C libraries Roost builds against (and any extra Debian packages named as
# arguments), only when they are missing. Needs root or sudo on Debian/Ubuntu.
set -euo pipefail

packages=(libmicrohttpd-dev libsqlite3-dev libssl-dev libpcre2-dev libcurl4-openssl-dev libpq-dev pkg-config "$@")
missing=()
for package in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" || missing+=("$package")
done
[ ${#missing[@]} -eq 0 ] && exit 0

sudo=""
[ "$(id -u)" -ne 0 ] && sudo="sudo"
echo "Installing: ${missing[*]}"
$sudo apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}"
