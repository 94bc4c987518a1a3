#!/usr/bin/env bash
# The Debian packages seqlab's tests use: bubblewrap (the student sandbox), chromium (the
# browser tests of the HTML reports and exams), pango and fonts (WeasyPrint's paper exams, with
# the CJK numerals of the part titles), poppler-utils (reading the PDF exams back).
# `make setup` (so `make demo` and `make test`) runs this every time: one dpkg-query when all are
# there. It installs what is missing where it can (root and apt-get); where it cannot it stops
# the set-up with the command to run, so no test is skipped for a package nobody installed.
# SEQLAB_NO_SYSTEM_PACKAGES=1 goes on without them, saying which are missing: the product works
# without them (saying so), and their tests skip or fail with the reason.
set -euo pipefail
PACKAGES=(bubblewrap chromium poppler-utils libpango-1.0-0 libpangoft2-1.0-0 fonts-wqy-microhei fonts-dejavu-core)
if ! command -v dpkg-query >/dev/null; then
  missing=("${PACKAGES[@]}")
  how="not a Debian/Ubuntu system: install the equivalents of ${PACKAGES[*]}"
else
  installed="$(dpkg-query -W -f='${Package} ${Status}\n' "${PACKAGES[@]}" 2>/dev/null || true)"
  missing=()
  for p in "${PACKAGES[@]}"; do
    grep -qx "$p install ok installed" <<<"$installed" || missing+=("$p")
  done
  if [ ${#missing[@]} -eq 0 ]; then
    exit 0
  fi
  how="sudo apt-get install -y ${missing[*]}"
fi
if [ "${SEQLAB_NO_SYSTEM_PACKAGES:-}" = 1 ]; then
  echo "system packages: going on without ${missing[*]} (SEQLAB_NO_SYSTEM_PACKAGES=1); the tests that need them will say so" >&2
  exit 0
fi
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null && command -v dpkg-query >/dev/null; then
  echo "system packages: installing ${missing[*]}"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
  exit 0
fi
{
  echo "system packages missing: ${missing[*]}. Install them, then run make again:"
  echo "    $how"
  echo "(or SEQLAB_NO_SYSTEM_PACKAGES=1 make ... to go on without them)"
} >&2
exit 1
