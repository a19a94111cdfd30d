package models_test

import (
	"testing"

	"github.com/anishathalye/porcupine"
	"github.com/locklab/locklab/models"
)

func section(client int, call, ret int64, out models.SectionOutput) porcupine.Operation {
	return porcupine.Operation{
		ClientId: client,
		Input:    models.SectionInput{Client: client},
		Call:     call,
		Output:   out,
		Return:   ret,
	}
}

func wrote(client int, call, ret, observed, written int64) porcupine.Operation {
	return section(client, call, ret, models.SectionOutput{Observed: observed, Written: written, Result: models.Wrote})
}

func readOnly(client int, call, ret, observed int64) porcupine.Operation {
	return section(client, call, ret, models.SectionOutput{Observed: observed, Result: models.NoWrite})
}

func rejected(client int, call, ret, observed, written int64) porcupine.Operation {
	return section(client, call, ret, models.SectionOutput{Observed: observed, Written: written, Result: models.Rejected})
}

func unknownWrite(client int, call, ret, observed, written int64) porcupine.Operation {
	return section(client, call, ret, models.SectionOutput{Observed: observed, Written: written, Result: models.WriteUnknown})
}

func TestInventoryModel(t *testing.T) {
	tests := []struct {
		name    string
		initial int64
		history []porcupine.Operation
		legal   bool
	}{
		{"serial sections", 5, []porcupine.Operation{
			wrote(1, 0, 1, 5, 4),
			wrote(2, 2, 3, 4, 3),
		}, true},
		{"serial stale read", 5, []porcupine.Operation{
			wrote(1, 0, 1, 5, 4),
			wrote(2, 2, 3, 5, 4),
		}, false},
		{"lost update", 5, []porcupine.Operation{
			wrote(1, 0, 10, 5, 4),
			wrote(2, 5, 15, 5, 4),
		}, false},
		{"overlapping sections that serialized", 5, []porcupine.Operation{
			wrote(1, 0, 10, 5, 4),
			wrote(2, 5, 15, 4, 3),
		}, true},
		{"unknown write that happened", 5, []porcupine.Operation{
			unknownWrite(1, 0, historyEnd, 5, 4),
			wrote(2, 2, 3, 4, 3),
		}, true},
		{"unknown write that did not happen", 5, []porcupine.Operation{
			unknownWrite(1, 0, historyEnd, 5, 4),
			wrote(2, 2, 3, 5, 4),
		}, true},
		{"unknown write, then a read of neither value", 5, []porcupine.Operation{
			unknownWrite(1, 0, historyEnd, 5, 4),
			wrote(2, 2, 3, 7, 6),
		}, false},
		{"read only leaves the stock", 5, []porcupine.Operation{
			readOnly(1, 0, 1, 5),
			wrote(2, 2, 3, 5, 4),
		}, true},
		{"sold out", 1, []porcupine.Operation{
			wrote(1, 0, 1, 1, 0),
			readOnly(2, 2, 3, 0),
		}, true},
		{"read only of a value never written", 5, []porcupine.Operation{
			readOnly(1, 0, 1, 6),
		}, false},
		{"rejected leaves the stock", 5, []porcupine.Operation{
			rejected(1, 0, 1, 5, 4),
			wrote(2, 2, 3, 5, 4),
		}, true},
		{"rejected write seen by a later read", 5, []porcupine.Operation{
			rejected(1, 0, 1, 5, 4),
			readOnly(2, 2, 3, 4),
		}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := porcupine.CheckOperations(models.InventoryModel(tt.initial), tt.history); got != tt.legal {
				t.Errorf("CheckOperations = %v, want %v", got, tt.legal)
			}
		})
	}
}

func TestInventoryDescribe(t *testing.T) {
	m := models.InventoryModel(7)
	ops := []struct {
		in   models.SectionInput
		out  models.SectionOutput
		want string
	}{
		{models.SectionInput{Client: 1}, models.SectionOutput{Observed: 7, Written: 6, Result: models.Wrote}, "c1 read 7 → wrote 6"},
		{models.SectionInput{Client: 2, Token: 12}, models.SectionOutput{Observed: 7, Written: 6, Result: models.Rejected}, "c2 read 7 → rejected (token 12)"},
		{models.SectionInput{Client: 3}, models.SectionOutput{Observed: 0, Result: models.NoWrite}, "c3 read 0 → no write"},
		{models.SectionInput{Client: 4, Token: 9}, models.SectionOutput{Observed: 7, Written: 6, Result: models.WriteUnknown}, "c4 read 7 → unknown write 6 (token 9)"},
	}
	for _, tt := range ops {
		if got := m.DescribeOperation(tt.in, tt.out); got != tt.want {
			t.Errorf("DescribeOperation = %q, want %q", got, tt.want)
		}
	}
	// The model works on sets of possible stocks (NondeterministicModel),
	// so its states are described as sets.
	if got, want := m.DescribeState(m.Init()), "{stock 7}"; got != want {
		t.Errorf("DescribeState(Init()) = %q, want %q", got, want)
	}
	_, next := m.Step(m.Init(), models.SectionInput{Client: 1}, models.SectionOutput{Observed: 7, Written: 6, Result: models.WriteUnknown})
	if got, want := m.DescribeState(next), "{stock 7, stock 6}"; got != want {
		t.Errorf("DescribeState after an unknown write = %q, want %q", got, want)
	}
}
