package history

import (
	"regexp"
	"strconv"
	"strings"
)

// Version 1 recorded a fault as text only. fromV1 is the one place that
// reads that text: it fills the fields version 2 added from the labels and
// details version 1 wrote, which no locklab writes any more, so rewording
// today's labels changes nothing here. What the text does not tell stays
// empty: an unknown kind, no target, no failpoint.

// v1Label is one label, or the start of one, that version 1 wrote for a
// fault, and what it tells of the fault.
type v1Label struct {
	prefix string
	kind   string
	part   Part
	target TargetType
	role   string
}

// v1Labels are version 1's labels, by their start; the first that fits
// wins. The kind names are fault.Kinds' as they were when version 2 came.
var v1Labels = []v1Label{
	{prefix: FaultFailover, kind: "kill-master", part: PartFailover, target: TargetNode, role: "master"},
	{prefix: FaultSlowWork, kind: "slow-work", target: TargetClient},
	{prefix: FaultInjecting, part: PartInjection, target: TargetClient},
	{prefix: "client pause", kind: "pause", target: TargetClient},
	{prefix: "delayed command", kind: "command-delay", target: TargetClient},
	{prefix: "reply dropped", kind: "drop-reply", target: TargetLink},
	{prefix: "another user of the client's SQL pool", kind: "busy-pool", target: TargetClient},
	{prefix: "kill the master", kind: "kill-master", target: TargetNode, role: "master"},
	{prefix: "kill the leader", kind: "kill-leader", target: TargetNode, role: "leader"},
	{prefix: "kill lock node", kind: "kill-node", target: TargetNode},
	{prefix: "lock node", kind: "kill-node", part: PartRestart, target: TargetNode}, // "lock node 2 restarted ..."
	{prefix: "clock jump of", kind: "clock-jump", target: TargetNode},
	{prefix: "wall-clock jump of", kind: "clock-jump", target: TargetNode},
	{prefix: "pause lock node", kind: "pause-node", target: TargetNode},
	{prefix: "make data node", kind: "prefer-replica", target: TargetNode},
	{prefix: "cut replication", kind: "cut-replication", target: TargetLink},
	{prefix: "partition client", kind: "partition", target: TargetLink},
	{prefix: "add ", kind: "latency", target: TargetLink}, // "add 20ms latency between client 1 and ..."
	{prefix: "black-hole the", kind: "black-hole", target: TargetLink},
	{prefix: "drop the connections of client", kind: "drop-connection", target: TargetConnection},
	{prefix: "the server kills the connections", kind: "kill-connection", target: TargetConnection},
	{prefix: "skew the wall clock of client", kind: "clock-skew", target: TargetClient},
}

// v1Nodes finds the lock nodes a version-1 label named: "lock node 2",
// "data nodes [1 2]", "lock nodes [3 4]".
var v1Nodes = regexp.MustCompile(`nodes? \[?([0-9][0-9 ]*)\]?`)

// v1Failpoint finds the failpoint a version-1 detail named: "failpoint
// before DEL (release command 1): ..." or "at failpoint critical-section
// of client 0".
var v1Failpoint = regexp.MustCompile(`^(?:at )?failpoint (.+?)(?: of client -?[0-9]+)?(?::|$)`)

// fromV1 is op, read from a version-1 history, with the fields version 2
// added filled from its label and detail where they tell.
func fromV1(op Op) Op {
	switch op.Kind {
	case KindCrash:
		// A crash's detail was its trigger: "failpoint after-setnx", or a
		// command's words at a command failpoint, or why it crashed.
		op.Failpoint = strings.TrimPrefix(op.Detail, "failpoint ")
		return op
	case KindFault:
	default:
		return op
	}
	if m := v1Failpoint.FindStringSubmatch(op.Detail); m != nil {
		op.Failpoint = m[1]
	}
	for _, l := range v1Labels {
		if !strings.HasPrefix(op.Fault, l.prefix) {
			continue
		}
		op.FaultKind, op.Part = l.kind, l.part
		op.Target = &Target{Type: l.target, Role: l.role}
		if m := v1Nodes.FindStringSubmatch(op.Fault); m != nil && l.target != TargetClient {
			for _, f := range strings.Fields(m[1]) {
				if n, err := strconv.Atoi(f); err == nil {
					op.Target.Nodes = append(op.Target.Nodes, n)
				}
			}
		}
		break
	}
	return op
}
