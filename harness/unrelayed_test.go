package harness

import (
	"io"
	"strings"
	"testing"
)

// relayer is a SentinelRelayer that starts nothing.
type relayer struct{}

func (relayer) RelaySentinels(relays []string) ([]string, io.Closer, error) { return relays, nil, nil }

// TestUnrelayed: a relay reads each service's requests but one whose
// protocol it does not know, and replicated's only behind relayed
// Sentinels.
func TestUnrelayed(t *testing.T) {
	tests := []struct {
		name string
		e    Endpoints
		why  string // a word of the reason; "" when relayed
	}{
		{"single", Endpoints{Redis: "127.0.0.1:1"}, ""},
		{"redlock", Endpoints{Nodes: []string{"127.0.0.1:1", "127.0.0.1:2"}}, ""},
		{"replicated, relayed Sentinels", Endpoints{Sentinels: []string{"127.0.0.1:3"}, Links: []string{"127.0.0.1:1"}, SentinelRelay: relayer{}}, ""},
		{"replicated, no relayed Sentinels", Endpoints{Sentinels: []string{"127.0.0.1:3"}}, "replicated"},
		{"memcached", Endpoints{Env: []string{"LOCKLAB_MEMCACHED=127.0.0.1:1"}}, ""},
		{"a protocol no relay reads", Endpoints{Env: []string{"LOCKLAB_OTHER=127.0.0.1:1"}}, "no relay"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := tt.e.Unrelayed()
			if (got == "") != (tt.why == "") || !strings.Contains(got, tt.why) {
				t.Errorf("Unrelayed: %q, want %q", got, tt.why)
			}
		})
	}
}
