#!/bin/bash
# Reward 1 when /app/report.json equals the paid totals of /app/orders.json, else 0.
# It needs jq from the image (environment/Dockerfile installs it), so it also checks the build.
mkdir -p /logs/verifier
want='{"customers": {"ada": 150.5, "bob": 19.75, "cy": 45.25}, "total": 215.5}'
if ! command -v jq >/dev/null 2>&1; then
  echo 0 > /logs/verifier/reward.txt
  echo "report fail: jq is not installed in the image"
  exit 0
fi
# Slurped, so the file must hold exactly one JSON value: `jq -e` on an empty file exits 0 (jq 1.6),
# which `bench tasks audit` caught accepting an empty report.
if [ -f /app/report.json ] && jq -n -e --argjson want "$want" --slurpfile got /app/report.json '$got == [$want]' >/dev/null 2>&1; then
  echo 1 > /logs/verifier/reward.txt
  echo "report pass"
else
  echo 0 > /logs/verifier/reward.txt
  echo "report fail: got $(jq -c . /app/report.json 2>/dev/null || echo 'no valid /app/report.json')"
fi
