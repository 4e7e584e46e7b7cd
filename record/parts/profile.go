package parts

// The profile's parts of the record (package profile).

// KindShare is one kind of thread's part of a profile.
type KindShare struct {
	Kind    string  `json:"kind"`
	Weight  int64   `json:"weight_ns"`
	Share   float64 `json:"share"`
	Threads int     `json:"threads"`
}

// Func is one function's inclusive share: the part of the profile's
// weight in stacks that pass through it (counted once per stack however
// often it recurs).
type Func struct {
	Name  string  `json:"name"`
	Share float64 `json:"share"`
}

// Gone is one call path the scenario no longer spends time in.
type Gone struct {
	// Path is the call path from the thread kind to the frame, folded.
	Path string `json:"path"`
	// Frame is its last frame; Caller the one before.
	Frame  string  `json:"frame"`
	Caller string  `json:"caller,omitempty"`
	Share  float64 `json:"baseline_share"` // of the baseline's time
	// ScenarioShare is the share of the scenario's time in the same path.
	ScenarioShare float64 `json:"scenario_share"`
}

// Prediction is the durability report's method: the share of the
// baseline's time spent in call paths the scenario no longer spends time
// in; removing that time predicts the scenario's rate as the baseline's
// divided by (1 - share), for a closed loop whose transactions take the
// time the profile measures.
type Prediction struct {
	// Kind is the threads compared: connection threads when both profiles
	// have them (their time is the transactions'), else all threads ("").
	Kind  string  `json:"kind,omitempty"`
	Share float64 `json:"share"`
	// Ratio is the predicted tps of the scenario over the baseline's.
	Ratio float64 `json:"predicted_ratio"`
	Gone  []Gone  `json:"gone,omitempty"`
}
