#!/bin/bash
# lkmap.sh BIN LOG
B=$1; RL=$(nm $B | awk '$3=="record_lock"{print $1}')
grep LOCKSTAT $2 | sed 's/.*LOCKSTAT //' | while read -r s u us _ t; do a=$(printf '%x' $((0x$RL + 0x$s))); b=$(printf '%x' $((0x$RL + 0x$u))); echo "$t $(addr2line -f -e $B $a | head -1) -> $(addr2line -f -e $B $b|head -1) ${us}us"; done
