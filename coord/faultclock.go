package coord

// FaultClockOffsetEnv shifts the clock of a coordinator given none by a
// duration ("5m", "-40s"), in a binary built with the orchestra_faults tag
// only: the fault tests run one engine of a fleet as a machine whose clock
// is off. faketime cannot do it (Go reads the clock through the vDSO).
const FaultClockOffsetEnv = "ORCHESTRA_FAULT_CLOCK_OFFSET"
