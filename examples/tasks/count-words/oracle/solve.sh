#!/bin/bash
wc -w < /app/passage.txt | tr -d ' ' > /app/count.txt
