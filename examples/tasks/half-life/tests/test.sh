#!/bin/bash
# Partial-credit verifier for half-life: three named checks, reward = fraction passed.
# The data were generated with a true half-life of 42.0 minutes (N0 = 20000, Gaussian counting noise).
TRUE_HALF_LIFE=42.0
ANSWER=/app/answer.txt
OUT=/logs/verifier
mkdir -p "$OUT"

half_life=""
uncertainty=""
if [ -f "$ANSWER" ]; then
  half_life=$(awk '$1 == "half_life" { print $2; exit }' "$ANSWER")
  uncertainty=$(awk '$1 == "uncertainty" { print $2; exit }' "$ANSWER")
else
  echo "no $ANSWER"
fi

awk -v est="$half_life" -v unc="$uncertainty" -v truth="$TRUE_HALF_LIFE" -v out="$OUT" '
function isnum(s) { return s ~ /^[-+]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][-+]?[0-9]+)?$/ }
function verdict(ok) { return ok ? "pass" : "fail" }
function shown(s, ok) { return ok ? s : (s == "" ? "missing" : "not a number: " s) }
BEGIN {
  have_est = isnum(est); have_unc = isnum(unc)
  e = est + 0; u = unc + 0
  diff = e - truth; if (diff < 0) diff = -diff
  close_enough = have_est && diff <= 0.02 * truth
  plausible = have_est && have_unc && u > 0 && u < 0.10 * e
  consistent = have_est && have_unc && u > 0 && diff <= 3 * u
  passed = close_enough + plausible + consistent
  r = sprintf("%.4f", passed / 3)
  sub(/0+$/, "", r); sub(/\.$/, "", r)
  print r > (out "/reward.txt")
  printf "{\"reward\": %s, \"close_enough\": %d, \"plausible_uncertainty\": %d, \"consistent\": %d}\n", \
    r, close_enough, plausible, consistent > (out "/reward.json")
  printf "half_life %s (true %s), uncertainty %s\n", shown(est, have_est), truth, shown(unc, have_unc)
  printf "close_enough %s, plausible_uncertainty %s, consistent %s\n", \
    verdict(close_enough), verdict(plausible), verdict(consistent)
}'
