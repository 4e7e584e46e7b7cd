// Package analysis holds the decisions over a run's records and renders
// nothing: which cells pair with which (the baseline, the rounds both
// finished), which figure a comparison decides on, the paired estimates of
// a ratio (Hodges-Lehmann, the signed-rank test, Mann-Kendall's trend
// test), the expectations of a manifest and the stopping rule of a
// conclusive run (DecideRounds, asked by the runner after every round).
// Package results writes what these decide (summary.md, report.html,
// plots, CSV); analysis imports no writer, plot or server.
package analysis

// Confidence is the level of the confidence intervals benchmatrix reports.
const Confidence = 0.95

// Alpha is the level of the Conclusion's tests and of each comparison the
// rounds decide.
const Alpha = 0.05
