package presets

// QemuImgRead is qemu-img convert reading the whole export into a null-co
// image its size: the real client of the qemu-img-read and qemu-nbd-read
// sweeps, and the one nbdscope calibrate compares our load with.
const QemuImgRead = "qemu-img convert -f raw -O raw -W -n {uri} " + qemuNullCo
