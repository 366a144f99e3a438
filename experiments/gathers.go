package experiments

// periodicOnly is the gather rule the experiments' documented figures
// were measured with: gathers on the period alone, none at start or on a
// neighbourhood change (snapshot.Config.GatherSettle negative). Issue 27's
// early gathers change every run; the experiments keep the measured rule
// until their figures are re-measured with the new one (docs/RESULTS.md).
const periodicOnly = -1
