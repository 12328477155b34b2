# Nested-call cost: ARGV[0] iterations of redis call GET KEYS[0] (ARGV[1] eq call),
# or of the empty loop alone (anything else), for the driver to subtract.
lassign $ARGV n mode
set key [lindex $KEYS 0]
if {$mode eq "call"} {
    for {set i 0} {$i < $n} {incr i} {redis call GET $key}
} else {
    for {set i 0} {$i < $n} {incr i} {}
}
return [redis int $n]
