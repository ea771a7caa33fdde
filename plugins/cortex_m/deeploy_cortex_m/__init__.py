"""Arm Cortex-M platforms for deeploy_core: int8 layers through CMSIS-NN, everything else through generic C."""
