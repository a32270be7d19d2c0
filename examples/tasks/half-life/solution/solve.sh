#!/bin/bash
# Reference solution: least-squares fit of ln(count) against time, half-life = ln 2 / -slope,
# uncertainty from the slope's standard error.
set -euo pipefail
awk -F, 'NR > 1 && $2 > 0 { n++; x[n] = $1; y[n] = log($2); sx += $1; sy += y[n] }
END {
  mx = sx / n; my = sy / n
  for (i = 1; i <= n; i++) { sxx += (x[i] - mx) ^ 2; sxy += (x[i] - mx) * (y[i] - my) }
  b = sxy / sxx; a = my - b * mx
  for (i = 1; i <= n; i++) { r = y[i] - a - b * x[i]; ss += r * r }
  se = sqrt(ss / (n - 2) / sxx)
  t = log(2) / -b
  printf "half_life %.4f\nuncertainty %.4f\n", t, t * se / (b < 0 ? -b : b)
}' /app/data/decay.csv > /app/answer.txt
cat /app/answer.txt
