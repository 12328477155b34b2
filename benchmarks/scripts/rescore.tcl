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
        while {$j > 0} {
            set i [expr {$j - 1}]
            set before [lindex $weights $i]
            if {$before > $w || ($before == $w && [string compare [lindex $names $i] $member] < 0)} {
                break
            }
            lset names $j [lindex $names $i]
            lset weights $j $before
            set j $i
        }
        lset names $j $member
        lset weights $j $w
    }
}
return $names
