#!/usr/bin/env bash
# The Python packages the account tests use, from PyPI into .build/smtp-venv (only when missing):
# aiosmtpd, a real SMTP server (scripts/smtp-sink.py), and websockets, which drives headless Chromium
# (scripts/browser-reset.py). Needs python3 with venv (Debian: python3-venv).
set -euo pipefail
venv=.build/smtp-venv
if [ -x "$venv/bin/python" ] && "$venv/bin/python" -c "import aiosmtpd, websockets" 2>/dev/null; then exit 0; fi
python3 -m venv "$venv"
"$venv/bin/pip" install -q aiosmtpd websockets
