// ina/dnn-models.h: the built-in table is data/models/dnn-models.csv, exactly;
// a user's rows replace or extend it; bad files are refused naming the file,
// the line and the field.
#include "ina/dnn-models.h"

#include <gtest/gtest.h>

#include <stdexcept>
#include <string>

namespace {

using inasim::BuiltinDnnModels;
using inasim::DnnModel;
using inasim::FindDnnModel;
using inasim::MergeDnnModels;
using inasim::ParseDnnModels;

constexpr const char* kHeader = "name,parameters,batch,gpu,images_per_s,source\n";

TEST(DnnModels, BuiltinTableIsTheDataFile) {
  const auto& m = BuiltinDnnModels();
  ASSERT_EQ(m.size(), 5u);
  const DnnModel& vgg = *FindDnnModel(m, "vgg16");
  EXPECT_EQ(vgg.parameters, 138'357'544u);  // Keras Applications' VGG16
  EXPECT_EQ(vgg.GradientBytes(), 553'430'176u);
  EXPECT_EQ(vgg.batch, 64u);
  EXPECT_EQ(vgg.gpu, "P100");
  EXPECT_DOUBLE_EQ(vgg.ComputeSeconds(), 64 / 154.0);
  EXPECT_EQ(FindDnnModel(m, "alexnet")->batch, 512u);
  EXPECT_EQ(FindDnnModel(m, "googlenet"), nullptr);  // no citable P100 figure: left out
  for (const DnnModel& d : m) EXPECT_FALSE(d.source.empty()) << d.name;
}

TEST(DnnModels, AUsersRowsReplaceByNameOrAreAdded) {
  const auto mine = ParseDnnModels(std::string("# mine\n\n") + kHeader +
                                       "resnet50,25557032,32,V100,400,torchvision\r\n"
                                       "bert-large,340000000,8,A100,50.5,my measurement\n",
                                   "mine.csv");
  const auto all = MergeDnnModels(BuiltinDnnModels(), mine);
  ASSERT_EQ(all.size(), 6u);
  EXPECT_EQ(FindDnnModel(all, "resnet50")->parameters, 25'557'032u);
  EXPECT_EQ(FindDnnModel(all, "resnet50")->gpu, "V100");
  EXPECT_DOUBLE_EQ(FindDnnModel(all, "bert-large")->images_per_s, 50.5);
  EXPECT_EQ(FindDnnModel(all, "vgg16")->parameters, 138'357'544u);  // untouched
}

void ExpectError(const std::string& text, const std::string& words) {
  try {
    (void)ParseDnnModels(text, "m.csv");
    FAIL() << "accepted: " << text;
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find(words), std::string::npos) << e.what();
  }
}

TEST(DnnModels, BadFilesNameTheLineAndTheField) {
  ExpectError("name,params\n", "m.csv:1: header: must be name,parameters,batch,gpu,images_per_s,source");
  ExpectError(std::string(kHeader) + "a,100,64,P100,1\n", "m.csv:2: 5 fields, the header has 6");
  ExpectError(std::string(kHeader) + "a,1e6,64,P100,1,s\n", "m.csv:2: parameters: \"1e6\" is not an integer");
  ExpectError(std::string(kHeader) + "a,-5,64,P100,1,s\n", "m.csv:2: parameters: \"-5\" is not an integer");
  ExpectError(std::string(kHeader) + "#\na,5,0,P100,1,s\n", "m.csv:3: batch: \"0\" is not an integer from 1");
  ExpectError(std::string(kHeader) + "a,5,8,P100,fast,s\n", "m.csv:2: images_per_s: \"fast\" is not a number > 0");
  ExpectError(std::string(kHeader) + "a,5,8,P100,0,s\n", "m.csv:2: images_per_s: \"0\" is not a number > 0");
  ExpectError(std::string(kHeader) + "a,5,8,P100,1,\n", "m.csv:2: source: empty");
  ExpectError(std::string(kHeader) + ",5,8,P100,1,s\n", "m.csv:2: name: empty");
  ExpectError(std::string(kHeader) + "a,5,8,P100,1,s\na,6,8,P100,1,s\n", "m.csv:3: name: \"a\" given twice");
  ExpectError("# only notes\n", "m.csv: no models");
}

}  // namespace
