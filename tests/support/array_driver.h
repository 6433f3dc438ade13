// SPDX-License-Identifier: MIT
#pragma once

#include <systemc>

#include "array/systolic_array.h"

namespace fastsim::test {

/// Starts one job on an array at t = 0 and records when the array reports it done.
SC_MODULE(ArrayDriver) {
    array::SystolicArray* array = nullptr;
    array::ArrayJob job;
    sc_core::sc_time finished;
    SC_CTOR(ArrayDriver) { SC_THREAD(drive); }
    void drive() {
        array->start(job);
        wait(array->done());
        finished = sc_core::sc_time_stamp();
    }
};

}  // namespace fastsim::test
