# Time-decay leaderboard rescore. KEYS: the board (score = last-activity unix time).
# ARGV: now, mode (LINEAR | EXP | STEP), param (half-life or window, seconds), k.
# Replies the top-k member names by weight, ties by name ascending, zero weights left out,
# keeping a bounded insertion-sorted array (no full sort).
lassign $ARGV now mode param k
set param [expr {double($param)}]
set board [redis call ZRANGE [lindex $KEYS 0] 0 -1 WITHSCORES]
set names [list]
set weights [list]
set n 0
foreach {member score} $board {
    set age [expr {$now - $score}]
    if {$age < 0} {
        set age 0
    }
    if {$mode eq "LINEAR"} {
        set w [expr {1.0 / (1.0 + $age / $param)}]
    } elseif {$mode eq "EXP"} {
        set w [expr {pow(0.5, $age / $param)}]
    } elseif {$age <= $param} {
        set w 1
    } else {
        set w 0
    }
    if {$w > 0 && ($n < $k || $w > [lindex $weights end]
            || ($w == [lindex $weights end] && [string compare $member [lindex $names end]] < 0))} {
        if {$n < $k} {
            lappend names $member
            lappend weights $w
            incr n
        }
        set j [expr {$n - 1}]
        while {$j > 0 && ([lindex $weights $j-1] < $w
                || ([lindex $weights $j-1] == $w && [string compare [lindex $names $j-1] $member] > 0))} {
            lset names $j [lindex $names $j-1]
            lset weights $j [lindex $weights $j-1]
            incr j -1
        }
        lset names $j $member
        lset weights $j $w
    }
}
return $names
