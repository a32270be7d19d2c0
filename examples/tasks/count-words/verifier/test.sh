#!/bin/bash
# Reward 1 when /app/count.txt holds the passage's word count (66, as `wc -w` counts it), else 0.
EXPECTED=66
mkdir -p /logs/verifier
got=$([ -f /app/count.txt ] && tr -d '[:space:]' < /app/count.txt)
if [ "$got" = "$EXPECTED" ]; then
  echo 1 > /logs/verifier/reward.txt
  echo "word_count pass"
else
  echo 0 > /logs/verifier/reward.txt
  echo "word_count fail (got '${got:-nothing}', expected $EXPECTED)"
fi
