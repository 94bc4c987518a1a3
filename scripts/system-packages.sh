#!/usr/bin/env bash
# The Debian packages seqlab's tests use: bubblewrap (the student sandbox), chromium (the
# browser tests of the HTML reports and exams), pango and fonts (WeasyPrint's paper exams, with
# the CJK numerals of the part titles), poppler-utils (reading the PDF exams back).
# The product works without them, saying so; CI installs them so those tests run for real.
set -euo pipefail
PACKAGES=(bubblewrap chromium poppler-utils libpango-1.0-0 libpangoft2-1.0-0 fonts-wqy-microhei fonts-dejavu-core)
missing=()
for p in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "system packages present: ${PACKAGES[*]}"
  exit 0
fi
if [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null; then
  echo "cannot install ${missing[*]} (needs root and apt-get); the tests that need them will say so" >&2
  exit 0
fi
apt-get update -qq
DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
echo "installed: ${missing[*]}"
